#!/usr/bin/env python3
"""Connection flood against the system daemon: user A's `gshare submit` latency while user B
holds N idle connections, with the daemon's RSS, CPU and log lines meanwhile.

Run as root (it makes the users gshare-a and gshare-b with useradd -m, and starts a
`gshare daemon --system` on private paths under a temporary directory, a new one for each N):

    python3 test/bench/conn_flood.py BUILD_DIR [--counts 1000,5000,20000] [--submits 20]

BUILD_DIR holds src/gshare (and src/libgshare.so). For each N, B's holders (processes of at
most 10,000 connections each, as descriptors allow) connect N times and say nothing; after 1 s
A submits --submits held jobs one after the other (each `gshare submit` timed from its start to
its exit, as A, in A's own process); then the holders count how many of their connections are
open (b_open_during) and, 12 s after they connected, how many still are (b_open_after_12s).
The daemon's CPU seconds, peak RSS (sampled after the connects, the submits and at 12 s) and
log lines are taken over that whole window, from before the first connect. One line of JSON
per N on stdout; the temporary directory (the daemon's log) is kept with --keep.

Internal modes (run as B or A by the above): `hold SOCKET N` and `submit GSHARE SOCKET K`."""
import argparse
import json
import os
import pwd
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

# The e2e helpers' readers of /proc (standard library only, no side effects on import).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from gshare_e2e import proc_cpu_seconds, proc_rss_kib  # noqa: E402

PER_HOLDER = 10_000
# The users' Python: the one running this may live where they cannot read (root's pyenv).
PYTHON = shutil.which("python3", path="/usr/bin:/bin") or sys.executable


def closed(s):
    try:
        return s.recv(1, socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def hold(path, n):
    """Connects n times, says nothing; reports on each line read from stdin."""
    conns, failed = [], 0
    t0 = time.monotonic()
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            conns.append(s)
        except OSError:
            failed += 1
            s.close()
    print(json.dumps({"connect_s": time.monotonic() - t0, "connect_failed": failed,
                      "connected_at": time.monotonic()}), flush=True)
    for _ in sys.stdin:
        print(json.dumps({"open": sum(not closed(s) for s in conns), "held": len(conns)}),
              flush=True)


def submit(gshare, path, k):
    """k held submissions, one after the other, each timed; a JSON line of the times."""
    env = {"PATH": "/usr/bin:/bin", "HOME": pwd.getpwuid(os.getuid()).pw_dir,
           "GSHARE_SYSTEM_SOCKET": path}
    times, errors = [], []
    for _ in range(k):
        t0 = time.monotonic()
        r = subprocess.run([gshare, "submit", "--hold", "--", "true"], env=env, cwd="/",
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        times.append(time.monotonic() - t0)
        if r.returncode != 0:
            errors.append(r.stderr.strip()[-200:])
    print(json.dumps({"times": times, "errors": errors}), flush=True)


def ensure_user(name):
    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "-m", name], check=True)
        return pwd.getpwnam(name)


def as_user(user, nofile=None):
    """A preexec_fn: the descriptor limit raised as far as the hard one allows, then `user`."""
    def drop():
        if nofile:
            hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(nofile, hard), hard))
        os.setgroups([])
        os.setgid(user.pw_gid)
        os.setuid(user.pw_uid)
    return drop


def daemon_pid(state):
    with open(os.path.join(state, "daemon.json")) as f:
        return json.load(f)["pid"]


def log_lines(path):
    try:
        with open(path) as f:
            return f.read().count("\n")
    except OSError:
        return 0


def run_one(gshare, sock, state, a, b, n, submits):
    pid = daemon_pid(state)
    log = os.path.join(state, "daemon.log")
    rss0, lines0 = proc_rss_kib(pid), log_lines(log)
    cpu0, t0 = proc_cpu_seconds(pid), time.monotonic()
    rss_peak = rss0
    holders = []
    for i in range(0, n, PER_HOLDER):
        k = min(PER_HOLDER, n - i)
        holders.append(subprocess.Popen(
            [PYTHON, os.path.abspath(__file__), "hold", sock, str(k)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            preexec_fn=as_user(b, k + 64)))
    started = [json.loads(h.stdout.readline()) for h in holders]
    time.sleep(1.0)
    rss_peak = max(rss_peak, proc_rss_kib(pid))
    r = subprocess.run([PYTHON, os.path.abspath(__file__), "submit", gshare, sock,
                        str(submits)], stdout=subprocess.PIPE, text=True, preexec_fn=as_user(a))
    submitted = json.loads(r.stdout)
    rss_peak = max(rss_peak, proc_rss_kib(pid))

    def count():
        out = []
        for h in holders:
            h.stdin.write("count\n")
            h.stdin.flush()
            out.append(json.loads(h.stdout.readline()))
        return sum(o["open"] for o in out)

    open_after_submits = count()
    time.sleep(max(0.0, min(s["connected_at"] for s in started) + 12.0 - time.monotonic()))
    open_after_12s = count()
    rss_peak = max(rss_peak, proc_rss_kib(pid))
    window, cpu, lines1 = time.monotonic() - t0, proc_cpu_seconds(pid) - cpu0, log_lines(log)
    for h in holders:
        h.stdin.close()
        h.wait()
    times = sorted(submitted["times"])
    return {
        "n": n,
        "connect_s": round(max(s["connect_s"] for s in started), 3),
        "connect_failed": sum(s["connect_failed"] for s in started),
        "b_open_during": open_after_submits,
        "b_open_after_12s": open_after_12s,
        "a_submits": len(times),
        "a_failed": len(submitted["errors"]),
        "a_first_error": submitted["errors"][0] if submitted["errors"] else "",
        "a_p50_ms": round(1000 * statistics.median(times), 1),
        "a_p90_ms": round(1000 * times[int(0.9 * (len(times) - 1))], 1),
        "a_max_ms": round(1000 * times[-1], 1),
        "daemon_rss_kib_before": rss0,
        "daemon_rss_kib_peak": rss_peak,
        "daemon_cpu_s": round(cpu, 2),
        "window_s": round(window, 1),
        "log_lines": lines1 - lines0,
    }


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "hold":
        return hold(sys.argv[2], int(sys.argv[3]))
    if len(sys.argv) > 1 and sys.argv[1] == "submit":
        return submit(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build")
    ap.add_argument("--counts", default="1000,5000,20000")
    ap.add_argument("--submits", type=int, default=20)
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("conn_flood: run as root (it makes users and a system daemon)")
    gshare = os.path.join(os.path.abspath(args.build), "src", "gshare")
    a, b = ensure_user("gshare-a"), ensure_user("gshare-b")
    tmp = tempfile.mkdtemp(prefix="conn-flood-")
    os.chmod(tmp, 0o755)
    try:
        # A daemon of its own for each N: its log lines and throttles are that N's alone.
        for n in (int(x) for x in args.counts.split(",")):
            run_dir = os.path.join(tmp, str(n))
            os.makedirs(run_dir, 0o755)
            sock = os.path.join(run_dir, "run", "gshare.sock")
            state = os.path.join(run_dir, "state")
            config = os.path.join(run_dir, "gshare.toml")
            with open(config, "w") as f:
                f.write('[queue]\ngpus = 1\n[system]\nsocket = "%s"\nstate_dir = "%s"\n' %
                        (sock, state))
            env = {"PATH": "/usr/bin:/bin", "HOME": "/root", "GSHARE_SYSTEM_SOCKET": sock}
            subprocess.run([gshare, "--config", config, "daemon", "start", "--system"], env=env,
                           check=True)
            try:
                result = run_one(gshare, sock, state, a, b, n, args.submits)
            finally:
                subprocess.run([gshare, "--config", config, "daemon", "stop", "--system"],
                               env=env)
            # Its whole log, start and stop lines included (counts held back are told at stop).
            result["log_lines_at_stop"] = log_lines(os.path.join(state, "daemon.log"))
            print(json.dumps(result), flush=True)
    finally:
        if args.keep:
            print("kept " + tmp, file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
