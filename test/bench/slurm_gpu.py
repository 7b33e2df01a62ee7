#!/usr/bin/env python3
"""Two PyTorch trainings of two users, submitted to a real Slurm with one shard each of the one
GPU, whose memory together exceeds the GPU: both finish under gshare with the losses of a bare
run. The machine's GPU is Slurm's gres (AutoDetect off, File=/dev/nvidia0, 4 shards), a single-node
cluster of test/e2e/slurm_cluster.py on private paths and ports, beside `gshare daemon --system`;
Slurm's TaskProlog/Prolog/Epilog run `gshare slurm ...` (docs/slurm.md). Run as root:

    python3 test/bench/slurm_gpu.py --gshare-dir dist --prefix slurm-prefix --out OUT

--prefix: Debian 12's Slurm and munge files where they are not installed (slurm_cluster.py
says what it holds). Steps: (1) one bare run of test/bench/mem_train.py --gib G (the reference
losses; both jobs run exactly this); (2) user A submits it to partition batch (priority 0), and
once it trains, user B to partition interactive (priority 10 by [slurm.partition_priority]);
`gshare status --json` every second into status.jsonl until both Slurm jobs ended. Prints and
writes summary.txt: each job's wall time and training seconds, whether its losses equal the
bare run's, the Slurm job ids and priorities gshare showed, the swaps, and what was left after
the Epilog."""
import argparse
import json
import os
import pwd
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
from slurm_cluster import SlurmCluster  # noqa: E402

USERS = ("gsbench1", "gsbench2")


def steps_of(text):
    return [l for l in text.splitlines() if l.startswith("step ")]


def ensure_user(name):
    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                       check=True)
        return pwd.getpwnam(name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gshare-dir", required=True)
    ap.add_argument("--prefix", default=None)
    ap.add_argument("--out", required=True)
    ap.add_argument("--gib", type=float, default=45)
    ap.add_argument("--steps", type=int, default=120)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--timeout", type=int, default=480)
    a = ap.parse_args()
    gshare = os.path.abspath(os.path.join(a.gshare_dir, "gshare"))
    prefix = os.path.abspath(a.prefix) if a.prefix else None
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    work = "/tmp/gshare-slurm-bench"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work, 0o755)
    os.chmod(work, 0o755)
    # mem_train.py finds examples/training.py two folders up: the same layout, readable by all.
    os.makedirs(os.path.join(work, "tree", "test", "bench"), 0o755)
    os.makedirs(os.path.join(work, "tree", "examples"), 0o755)
    train = os.path.join(work, "tree", "test", "bench", "mem_train.py")
    shutil.copy(os.path.join(HERE, "mem_train.py"), train)
    shutil.copy(os.path.join(HERE, "..", "..", "examples", "training.py"),
                os.path.join(work, "tree", "examples", "training.py"))
    for d, _, files in os.walk(os.path.join(work, "tree")):
        os.chmod(d, 0o755)
        for name in files:
            os.chmod(os.path.join(d, name), 0o755)
    args = [a.python, train, "--gib", str(a.gib), "--steps", str(a.steps)]
    summary = []

    def say(line):
        print(line, flush=True)
        summary.append(line)

    users = [ensure_user(u) for u in USERS]
    homes = {}
    for u in users:
        homes[u.pw_name] = os.path.join(work, "home-" + u.pw_name)
        os.makedirs(homes[u.pw_name], 0o755)
        os.chown(homes[u.pw_name], u.pw_uid, u.pw_gid)
    socket_path = os.path.join(work, "run", "gshare.sock")
    config = os.path.join(work, "gshare.toml")
    with open(config, "w") as f:
        f.write('[memory]\nengine = "swap"\n[slurm.partition_priority]\ninteractive = 10\n'
                '[system]\nsocket = "%s"\nstate_dir = "%s/state"\n' % (socket_path, work))
    env = dict(os.environ)
    subprocess.run([gshare, "--config", config, "daemon", "start", "--system"], env=env,
                   check=True, timeout=60)
    cluster = SlurmCluster(os.path.join(work, "slurm"), gshare, USERS, prefix=prefix,
                           gpus=("/dev/nvidia0",), shards=4, cpus=os.cpu_count(),
                           memory_mb=64000,
                           # slurmd initializes a cgroup plugin even when nothing uses it; a
                           # container has no systemd to ask for the cgroup v2 scope.
                           cgroup_conf="CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\n"
                                       "IgnoreSystemdOnFailure=yes\n")
    try:
        os.makedirs(cluster.root, 0o755)
        cluster.start()
        # (1) The reference: one bare run (after Slurm is up, so a broken cluster costs little).
        t0 = time.monotonic()
        bare = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=a.timeout)
        with open(os.path.join(out, "bare.out"), "w") as f:
            f.write(bare.stdout)
        say("bare: rc=%d wall=%.1f s %s" % (bare.returncode, time.monotonic() - t0,
                                             bare.stdout.strip().splitlines()[-1]))
        ref = steps_of(bare.stdout)

        cluster.set_target("--config %s" % config,
                           "export GSHARE_SYSTEM_SOCKET=%s\n" % socket_path)
        jobs = {}

        def sbatch(user, partition):
            home = homes[user.pw_name]
            script = os.path.join(home, "job.sh")
            with open(script, "w") as f:
                f.write("#!/bin/sh\nexec %s\n" % " ".join(args))
            os.chmod(script, 0o755)
            benv = {"HOME": home, "PATH": "/usr/bin:/bin"}
            benv.update(cluster.client_env())
            r = subprocess.run(["runuser", "-u", user.pw_name, "--", "env", "-i"] +
                               ["%s=%s" % kv for kv in benv.items()] +
                               ["sbatch", "--parsable", "-p", partition, "--gres=shard:1",
                                "-o", os.path.join(home, "job.out"), script],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               cwd=home, timeout=60)
            if r.returncode != 0:
                raise RuntimeError("sbatch: %s\n%s" % (r.stderr, cluster.logs()))
            return int(r.stdout.strip().split(";")[0])

        def status():
            r = subprocess.run([gshare, "--config", config, "status", "--json"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               timeout=30, env=dict(env, GSHARE_SYSTEM_SOCKET=socket_path))
            return json.loads(r.stdout) if r.returncode == 0 else None

        def slurm_running():
            r = subprocess.run(["squeue", "-h", "-o", "%i"], env=cluster.env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            return [l for l in r.stdout.split() if l.strip()]

        start = time.monotonic()
        jobs[users[0].pw_name] = sbatch(users[0], "batch")
        a_out = os.path.join(homes[users[0].pw_name], "job.out")
        while time.monotonic() - start < a.timeout:
            try:
                if "step 0 " in open(a_out).read():
                    break
            except OSError:
                pass
            time.sleep(0.5)
        b_at = time.monotonic() - start
        jobs[users[1].pw_name] = sbatch(users[1], "interactive")
        seen = {}
        with open(os.path.join(out, "status.jsonl"), "w") as log:
            while time.monotonic() - start < a.timeout:
                s = status()
                if s is not None:
                    log.write(json.dumps(s) + "\n")
                    for j in s["jobs"]:
                        if j.get("kind") == "slurm":
                            seen[j["slurm_job_id"]] = j
                if not slurm_running():
                    break
                time.sleep(1)
        makespan = time.monotonic() - start
        say("submitted A (batch) at 0 s, B (interactive) at %.1f s; both ended at %.1f s" %
            (b_at, makespan))
        for user in users:
            text = open(os.path.join(homes[user.pw_name], "job.out")).read()
            shutil.copy(os.path.join(homes[user.pw_name], "job.out"),
                        os.path.join(out, "%s.out" % user.pw_name))
            j = seen.get(jobs[user.pw_name], {})
            mem = j.get("memory", {})
            say("%s: slurm job %s step %s gshare job %s priority %s; %s; losses %s (%d steps); "
                "swaps out/in %s/%s" % (
                    user.pw_name, jobs[user.pw_name], j.get("slurm_step"), j.get("id"),
                    j.get("priority"), (text.strip().splitlines() or ["(no output)"])[-1],
                    "identical" if steps_of(text) == ref and ref else "DIFFER",
                    len(steps_of(text)), mem.get("swaps_out"), mem.get("swaps_in")))
        time.sleep(2)
        end = status()
        left = [j for j in (end or {}).get("jobs", [])
                if j.get("kind") == "slurm" and j["state"] == "RUNNING"]
        holders = [g.get("holder") for g in (end or {}).get("gpus", []) if g.get("holder")]
        say("after the Epilog: %d Slurm step(s) running in gshare, lease holders %s, "
            "host memory %s" % (len(left), holders, (end or {}).get("daemon", {}).get(
                "host_memory")))
        with open(os.path.join(out, "status_end.json"), "w") as f:
            json.dump(end, f, indent=1)
    finally:
        for name in ("slurmctld.log", "slurmd.log"):
            try:
                shutil.copy(os.path.join(cluster.root, "log", name), os.path.join(out, name))
            except OSError:
                pass
        cluster.stop()
        subprocess.run([gshare, "--config", config, "daemon", "stop", "--system"], env=env,
                       timeout=60)
        try:
            shutil.copy(os.path.join(work, "state", "daemon.log"), os.path.join(out, "daemon.log"))
        except OSError:
            pass
        with open(os.path.join(out, "summary.txt"), "w") as f:
            f.write("\n".join(summary) + "\n")


if __name__ == "__main__":
    main()
