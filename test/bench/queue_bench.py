#!/usr/bin/env python3
"""CPU benchmarks of the batch queue (docs/benchmarks.md, "Batch queue (CPU)"); driven by
test/bench/queue_bench.sh, which owns the temporary directories and stops every daemon on exit.
Standard library only.

    queue_bench.py meta GSHARE RAW                 -> '#' lines about the machine and build
    queue_bench.py submit GSHARE CFG WORK RAW      -> 1. submit latency (held, then running jobs)
    queue_bench.py db GSHARE CFG WORK RAW NAME ENDED PENDING
                                                   -> 2. one database of ENDED + PENDING jobs:
                                                      populate, first command, queue timings,
                                                      submit/cancel with that queue, sqlite3 alone
    queue_bench.py summary RAW                     -> the summary table (stdout)
    queue_bench.py selftest                        -> checks the summary code on synthetic lines

A run directory D (one per measurement, under WORK) holds the daemon's socket D/gshare.sock (its
lock is D/gshare.lock), its state directory D/state (gshare.db, daemon.log, logs/) and an empty
D/xdg as XDG_CONFIG_HOME, so no user configuration leaks in. Every gshare command gets
`--config CFG` ([queue] gpus = 1).

RAW lines: `phase<TAB>label<TAB>index<TAB>wall_ms<TAB>cpu_ms` for every timed process: wall_ms
from process start to exit, measured here around subprocess.run (stdout to /dev/null unless the
label says otherwise); cpu_ms the user + system CPU time of that process (getrusage of the
reaped child; `-` where not measured), which contention for the cores does not inflate. Labels
starting with "daemon CPU" hold the daemon's own CPU time (/proc/PID/schedstat) for the step
named, in both columns. `#` lines: metadata, counts, checks. Every timed command must exit 0.
"""
import fcntl
import json
import os
import platform
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time

from queue_populate import SQL_ALL, SQL_OPEN, populate

QUEUE_RUNS = int(os.environ.get("QUEUE_RUNS", "20"))
SUBMIT_HELD = int(os.environ.get("SUBMIT_HELD", "500"))
SUBMIT_RUN = int(os.environ.get("SUBMIT_RUN", "200"))
PROBES = int(os.environ.get("PROBES", "5"))          # submit/cancel with a loaded queue
RESTARTS = int(os.environ.get("RESTARTS", "3"))      # daemon start cycles per database
DRAIN_TIMEOUT = float(os.environ.get("DRAIN_TIMEOUT", "300"))


class Bench:
    """Runs gshare in one run directory and appends timings to RAW."""

    def __init__(self, gshare, cfg, rundir, raw, phase):
        self.gshare, self.cfg, self.dir, self.raw, self.phase = gshare, cfg, rundir, raw, phase
        self.state = os.path.join(rundir, "state")
        self.db = os.path.join(self.state, "gshare.db")
        self.lock = os.path.join(rundir, "gshare.lock")
        os.makedirs(os.path.join(rundir, "xdg"), exist_ok=True)
        self.env = dict(os.environ)
        self.env.update(GSHARE_SOCKET=os.path.join(rundir, "gshare.sock"),
                        GSHARE_STATE_DIR=self.state, XDG_CONFIG_HOME=os.path.join(rundir, "xdg"))
        self.env.pop("LD_PRELOAD", None)
        self.counts = {}

    def argv(self, *args):
        return [self.gshare, "--config", self.cfg, *args]

    def note(self, text):
        with open(self.raw, "a") as f:
            f.write(f"# {self.phase}: {text}\n")
        print(f"  {self.phase}: {text}", flush=True)

    def record(self, label, ms, cpu_ms=None):
        i = self.counts.get(label, 0)
        self.counts[label] = i + 1
        cpu = "-" if cpu_ms is None else f"{cpu_ms:.3f}"
        with open(self.raw, "a") as f:
            f.write(f"{self.phase}\t{label}\t{i}\t{ms:.3f}\t{cpu}\n")

    def run(self, args, label=None, stdout=subprocess.DEVNULL, check=True, argv=None):
        """Runs gshare ARGS (or ARGV as given); returns (ms, CompletedProcess)."""
        cmd = argv if argv is not None else self.argv(*args)
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter_ns()
        p = subprocess.run(cmd, env=self.env, stdout=stdout, stderr=subprocess.PIPE)
        ms = (time.perf_counter_ns() - t0) / 1e6
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_ms = (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) * 1e3
        if check and p.returncode != 0:
            sys.exit(f"queue_bench: {' '.join(cmd)}: exit {p.returncode}: "
                     f"{p.stderr.decode(errors='replace').strip()}")
        if label is not None:
            self.record(label, ms, cpu_ms)
        return ms, p

    def daemon_pid(self):
        return json.loads(self.output("status", "--json"))["daemon"]["pid"]

    @staticmethod
    def cpu_ms(pid):
        """CPU time of process PID so far (ms): schedstat (ns), else stat (clock ticks)."""
        try:
            with open(f"/proc/{pid}/schedstat") as f:
                return int(f.read().split()[0]) / 1e6
        except (OSError, ValueError, IndexError):
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) * 1e3 / os.sysconf("SC_CLK_TCK")

    def output(self, *args):
        return self.run(args, stdout=subprocess.PIPE)[1].stdout.decode()

    def submit(self, label, *opts):
        _, p = self.run(["submit", *opts, "--", "true"], label, stdout=subprocess.PIPE)
        return int(p.stdout.decode().strip())

    def wait_stopped(self, timeout=60):
        """Blocks until no daemon holds the lock (it has exited and closed the database)."""
        if not os.path.exists(self.lock):
            return
        deadline = time.monotonic() + timeout
        with open(self.lock, "a") as f:
            while True:
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    fcntl.flock(f, fcntl.LOCK_UN)
                    return
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        sys.exit(f"queue_bench: the daemon of {self.dir} did not exit")
                    time.sleep(0.01)

    def stop(self):
        self.run(["daemon", "stop"])
        self.wait_stopped()

    def daemon_log_line(self, needle):
        try:
            with open(os.path.join(self.state, "daemon.log"), errors="replace") as f:
                lines = [l.strip() for l in f if needle in l]
        except FileNotFoundError:
            return ""
        return lines[-1] if lines else ""

    def queue_json(self, *args):
        return json.loads(self.output("queue", "--json", *args))["jobs"]


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


# ---------------------------------------------------------------------------------- meta

def cmd_meta(gshare, raw):
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = "?"
    try:
        with open("/proc/meminfo") as f:
            mem = f"{int(f.readline().split()[1]) / 1048576:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    version = subprocess.run([gshare, "--version"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT).stdout.decode().strip()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    git = subprocess.run(["git", "-C", root, "describe", "--always", "--dirty"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode().strip()
    changed = subprocess.run(["git", "-C", root, "status", "--short", "--", "src", "include"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode()
    changed = ", ".join(l[3:] for l in changed.splitlines()) or "none"
    lines = [
        f"date {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}",
        f"cpu {model}; nproc {os.cpu_count() and len(os.sched_getaffinity(0))}; memory {mem}",
        f"os {platform.system()} {platform.release()}; python {platform.python_version()};"
        f" python sqlite3 {sqlite3.sqlite_version}",
        f"gshare {os.path.abspath(gshare)}: {version}; tree {git or '?'}; uncommitted in "
        f"src/ include/: {changed}",
    ]
    with open(raw, "a") as f:
        for line in lines:
            f.write(f"# meta: {line}\n")
    print("\n".join(lines))


# -------------------------------------------------------------------------------- submit

def cmd_submit(gshare, cfg, work, raw):
    # The harness's own cost: spawning and reaping a process that does nothing.
    b = Bench(gshare, cfg, os.path.join(work, "submit-held"), raw, "submit")
    b.note(f"load average at start {loadavg()}")
    for _ in range(50):
        b.run([], "harness: /bin/true", argv=["/bin/true"])
    for _ in range(20):
        b.run(["--version"], "gshare --version (no daemon)")

    # 1a. held jobs: nothing runs, only submission is measured.
    first = b.submit("first submit -H (starts the daemon)", "-H")
    ids = [b.submit("submit -H -- true", "-H") for _ in range(SUBMIT_HELD)]
    if ids != list(range(first + 1, first + 1 + SUBMIT_HELD)):
        sys.exit("queue_bench: held submissions did not get consecutive ids")
    pending = b.queue_json()
    b.note(f"{len(pending)} held jobs pending after {SUBMIT_HELD} + 1 submits "
           f"(reasons: {sorted({j.get('reason') for j in pending})})")
    if len(pending) != SUBMIT_HELD + 1:
        sys.exit("queue_bench: held jobs missing from the queue")
    b.stop()

    # 1b. jobs that run (`true`), max_running default: the daemon starts jobs meanwhile.
    r = Bench(gshare, cfg, os.path.join(work, "submit-run"), raw, "submit")
    r.submit("first submit (starts the daemon)")
    t_first = time.monotonic()
    for _ in range(SUBMIT_RUN):
        r.submit("submit -- true (jobs run)")
    t_last = time.monotonic()
    open_at_last = len(r.queue_json())
    while True:
        left = r.queue_json()
        if not left:
            break
        if time.monotonic() - t_last > DRAIN_TIMEOUT:
            sys.exit(f"queue_bench: {len(left)} jobs still queued after {DRAIN_TIMEOUT} s")
        time.sleep(0.05)
    t_drained = time.monotonic()
    states = {}
    for j in r.queue_json("-a"):
        states[j["state"]] = states.get(j["state"], 0) + 1
    r.note(f"running-jobs submits: {open_at_last} jobs pending/running right after the last "
           f"submit; queue empty {t_drained - t_last:.2f} s after it "
           f"({t_drained - t_first:.2f} s after the first); final states {states}; "
           f"load average {loadavg()}")
    if states != {"COMPLETED": SUBMIT_RUN + 1}:
        print(f"queue_bench: WARNING: not every job COMPLETED: {states}", file=sys.stderr)
    r.stop()


# ------------------------------------------------------------------------------ database

def count_lines(path):
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def cmd_db(gshare, cfg, work, raw, name, ended, pending):
    b = Bench(gshare, cfg, os.path.join(work, f"db-{name}"), raw, f"db-{name}")
    b.note(f"load average at start {loadavg()}")
    # Create and migrate the database with the daemon itself, then stop it.
    b.run(["daemon"])
    b.stop()
    t0 = time.perf_counter()
    cancellable = populate(b.db, b.state, ended, pending)
    b.note(f"populated {ended} ended (COMPLETED/FAILED) + {pending} pending jobs (held / begin "
           f"a day ahead / afterok on a held job, 1/3 each), with payloads, in one transaction "
           f"in {time.perf_counter() - t0:.1f} s; database {os.path.getsize(b.db) / 2**20:.1f} MiB")

    # The first command starts the daemon, which loads the pending jobs and runs admission
    # over them before it answers (its ready byte comes after LoadQueue).
    b.run(["queue"], "first queue (starts daemon, loads queue)")
    pid = b.daemon_pid()
    up = b.cpu_ms(pid)
    b.record("daemon CPU: start up to its first answers", up, up)
    b.note(f"daemon log: {b.daemon_log_line('queue: ')}")

    # Checks, and the output's size.
    open_jobs = b.queue_json()
    all_jobs = b.queue_json("-a")
    states = {}
    for j in all_jobs:
        states[j["state"]] = states.get(j["state"], 0) + 1
    b.note(f"queue lists {len(open_jobs)} jobs, queue -a {len(all_jobs)} ({states})")
    if len(open_jobs) != pending or len(all_jobs) != ended + pending:
        sys.exit("queue_bench: the queue does not list the populated jobs")
    for args, fname in ((["queue"], "queue.txt"), (["queue", "-a"], "queue-a.txt"),
                        (["queue", "-a", "--json"], "queue-a.json")):
        path = os.path.join(b.dir, fname)
        with open(path, "wb") as f:
            b.run(args, stdout=f)
        b.note(f"`gshare {' '.join(args)}` prints {count_lines(path)} lines, "
               f"{os.path.getsize(path) / 2**20:.2f} MiB")

    # The listings, interleaved, stdout to /dev/null; then once more each into a file.
    variants = [(["queue"], "queue > /dev/null"), (["queue", "-a"], "queue -a > /dev/null"),
                (["queue", "-a", "--json"], "queue -a --json > /dev/null")]
    for _ in range(QUEUE_RUNS):
        for args, label in variants:
            b.run(args, label)
    for _ in range(PROBES):
        with open(os.path.join(b.dir, "queue-a.txt"), "wb") as f:
            b.run(["queue", "-a"], "queue -a > file", stdout=f)
    for _ in range(QUEUE_RUNS):
        b.run(["status"], "status (daemon round trip)")

    # Queue events with this many pending jobs: each reruns admission over all of them after
    # its reply, so a request that follows at once also waits for that.
    # "daemon CPU": the daemon's CPU time from before the request until it is idle again
    # (the reply, the database write, admission over every pending job).
    pause = float(os.environ.get("IDLE_PAUSE", "1.0"))
    for _ in range(PROBES):
        time.sleep(pause)
        c0 = b.cpu_ms(pid)
        b.submit("submit -H, daemon idle", "-H")
        time.sleep(pause)
        c1 = b.cpu_ms(pid)
        b.record("daemon CPU per submit -H", c1 - c0, c1 - c0)
    for _ in range(PROBES):
        b.submit("submit -H, back to back", "-H")
    for i in range(PROBES):
        time.sleep(pause)
        c0 = b.cpu_ms(pid)
        b.run(["cancel", str(cancellable[-1 - i])], "cancel 1 pending, daemon idle")
        time.sleep(pause)
        c1 = b.cpu_ms(pid)
        b.record("daemon CPU per cancel", c1 - c0, c1 - c0)
    for i in range(PROBES):
        b.run(["cancel", str(cancellable[-1 - PROBES - i])], "cancel 1 pending, back to back")
    time.sleep(pause)
    for _ in range(PROBES):
        b.submit("submit -H", "-H")
        b.run(["status"], "status right after a submit")
    time.sleep(pause)
    left = len(b.queue_json())
    b.note(f"after the probes: {left} jobs pending (expected {pending + 3 * PROBES - 2 * PROBES})")

    # The same SELECT as `gshare queue` by the sqlite3 shell alone: printing every row in its
    # own format, and the engine alone (the sorted rows counted and their argv summed, no
    # output; the LIMIT keeps the ORDER BY, as in gshare's query).
    cli = shutil.which("sqlite3")
    for sql, label in ((SQL_OPEN, "queue"), (SQL_ALL, "queue -a")):
        if not cli:
            break
        engine = f"SELECT count(*), sum(length(argv)) FROM ({sql} LIMIT -1)"
        for _ in range(PROBES):
            b.run([], f"sqlite3 shell: SELECT of `{label}` > /dev/null",
                  argv=[cli, "-readonly", b.db, sql])
        for _ in range(PROBES):
            b.run([], f"sqlite3 shell: SELECT of `{label}`, engine only",
                  argv=[cli, "-readonly", b.db, engine])
    con = sqlite3.connect(f"file:{b.db}?mode=ro", uri=True)
    plan = "; ".join(r[-1] for r in con.execute("EXPLAIN QUERY PLAN " + SQL_OPEN))
    plan_all = "; ".join(r[-1] for r in con.execute("EXPLAIN QUERY PLAN " + SQL_ALL))
    con.close()
    b.note(f"query plan of `queue`: {plan}; of `queue -a`: {plan_all}")

    # Daemon start alone (loads the queue, admission), a few stop/start cycles.
    for _ in range(RESTARTS):
        b.stop()
        b.run(["daemon"], "daemon start (loads queue)")
        up = b.cpu_ms(b.daemon_pid())
        b.record("daemon CPU: start up to its first answers", up, up)
    b.note(f"daemon log: {b.daemon_log_line('queue: ')}; load average at end {loadavg()}")
    b.stop()


# ------------------------------------------------------------------------------- summary

def load_raw(raw):
    groups, notes = {}, []
    with open(raw) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            if line.startswith("#"):
                notes.append(line[1:].strip())
                continue
            phase, label, _, ms, cpu = line.split("\t")
            groups.setdefault((phase, label), []).append((float(ms), cpu))
    return groups, notes


def percentile(values, p):
    """Nearest-rank percentile."""
    v = sorted(values)
    k = max(0, min(len(v) - 1, -(-len(v) * p // 100) - 1))
    return v[int(k)]


def summary(raw):
    groups, notes = load_raw(raw)
    out = [f"# {n}" for n in notes]
    width = max([len(l) for (_, l) in groups] + [20])
    out.append("")
    out.append(f"{'phase':<10} {'measurement':<{width}} {'n':>4} {'min':>8} {'median':>8} "
               f"{'p95':>8} {'max':>8} {'cpu med':>8}")
    for (phase, label), rows in groups.items():
        v = [ms for ms, _ in rows]
        cpu = [float(c) for _, c in rows if c != "-"]
        p95 = f"{percentile(v, 95):8.2f}" if len(v) >= 20 else f"{'-':>8}"
        cpu_med = f"{statistics.median(cpu):8.2f}" if cpu else f"{'-':>8}"
        out.append(f"{phase:<10} {label:<{width}} {len(v):>4} {min(v):8.2f} "
                   f"{statistics.median(v):8.2f} {p95} {max(v):8.2f} {cpu_med}")
    out.append("")
    out.append("ms. min..max: wall time, process start to exit, as the caller sees it (stdout to")
    out.append("/dev/null unless named); cpu med: median user+system CPU time of that process.")
    out.append("\"daemon CPU\" rows: the daemon's own CPU time for the step named.")
    return "\n".join(out) + "\n"


def selftest():
    import tempfile
    with tempfile.NamedTemporaryFile("w", delete=False) as f:
        f.write("# meta: x\n")
        for i in range(20):
            f.write(f"p\ta b\t{i}\t{i + 1}.0\t1.5\n")
        f.write("p\tc\t0\t5.0\t-\n")
    text = summary(f.name)
    os.unlink(f.name)
    assert "# meta: x" in text, text
    row = [l for l in text.splitlines() if l.startswith("p ") and " a b " in l][0].split()
    assert row[3:] == ["20", "1.00", "10.50", "19.00", "20.00", "1.50"], row
    row = [l for l in text.splitlines() if l.startswith("p ") and " c " in l][0].split()
    assert row[1:] == ["c", "1", "5.00", "5.00", "-", "5.00", "-"], row
    assert percentile([1, 2, 3, 4], 50) == 2 and percentile(list(range(1, 101)), 95) == 95
    print("selftest ok")


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    cmd, args = argv[1], argv[2:]
    if cmd == "meta" and len(args) == 2:
        cmd_meta(*args)
    elif cmd == "submit" and len(args) == 4:
        cmd_submit(*args)
    elif cmd == "db" and len(args) == 7:
        cmd_db(*args[:5], int(args[5]), int(args[6]))
    elif cmd == "summary" and len(args) == 1:
        sys.stdout.write(summary(args[0]))
    elif cmd == "selftest" and not args:
        selftest()
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
