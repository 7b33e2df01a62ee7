"""The databases of queue_bench.py: a month of ended jobs and a day of pending ones written
straight into a gshare database, as a busy user's queue holds them (names, argv, projects,
priorities, time limits, states and reasons drawn from one seed), and the queries of `gshare
queue` for sqlite3 alone. Standard library only."""
import json
import os
import random
import sqlite3
import sys
import time

# The jobs table's columns this bench fills (those of schema version 2; the later ones take their
# defaults: check_schema).
COLUMNS = ["name", "argv", "cwd", "uid", "priority", "quantum_ms", "gpu", "state", "reason",
           "submit_time", "start_time", "end_time", "exit_code", "signal", "pid",
           "lease_seconds", "wait_seconds", "peak_bytes", "kind", "output", "time_limit_ms",
           "kill_after_ms", "dependency", "held", "begin_time", "end_request", "runner_pid",
           "runner_start", "slot"]
PAYLOAD_COLUMNS = ["job_id", "env", "script"]

# The open and all jobs in queue order in one query, for sqlite3 alone (`gshare queue` reads the
# same rows state group by state group: src/store/job_store_list.cc).
QUEUE_ORDER = ("ORDER BY CASE state WHEN 'RUNNING' THEN 0 WHEN 'SUSPENDED' THEN 0"
               " WHEN 'PENDING' THEN 1 ELSE 2 END,"
               " CASE state WHEN 'PENDING' THEN -priority ELSE 0 END,"
               " CASE state WHEN 'PENDING' THEN submit_time WHEN 'RUNNING' THEN start_time"
               " WHEN 'SUSPENDED' THEN start_time ELSE -id END, id")
SELECT = "SELECT id, " + ", ".join(COLUMNS) + " FROM jobs"
SQL_OPEN = SELECT + " WHERE state IN ('PENDING', 'RUNNING', 'SUSPENDED') " + QUEUE_ORDER
SQL_ALL = SELECT + " " + QUEUE_ORDER


NAMES = ["train", "eval", "sweep-lr", "preprocess", "gpt-125m", "resnet18", "finetune-bert",
         "tokenize", "ablation", "infer-batch"]
PROJECTS = ["gpt", "vision", "sweeps", "nlp-eval"]


def job_argv(rng, n):
    kind = rng.randrange(4)
    if kind == 0:
        return ["python3", "train.py", "--lr", rng.choice(["3e-4", "1e-4", "6e-4", "1e-3"]),
                "--seed", str(n % 97)]
    if kind == 1:
        return ["python3", "-m", "torch.distributed.run", "--nproc_per_node=1", "train_gpt.py",
                "--config", "configs/gpt-125m.yaml", "--max-steps", str(rng.choice([2000, 5000]))]
    if kind == 2:
        return ["bash", "-c", f"python3 eval.py --ckpt ckpt/step_{rng.randrange(1, 50) * 1000}.pt"]
    return ["./run_sweep.sh", str(n % 50)]


def check_schema(con, db):
    """Exits with one line unless the database's tables take the rows populate writes: every
    column it fills exists, and every other column is nullable or has a default."""
    for table, cols in (("jobs", ["id"] + COLUMNS), ("job_payloads", PAYLOAD_COLUMNS)):
        info = con.execute(f"PRAGMA table_info({table})").fetchall()  # cid name type notnull dflt pk
        names = {r[1] for r in info}
        missing = [c for c in cols if c not in names]
        unfilled = [r[1] for r in info if r[3] and r[4] is None and not r[5] and r[1] not in cols]
        if missing or unfilled:
            sys.exit(f"queue_bench: {db}: table {table} lacks {missing} or needs {unfilled}")


def populate(db, state_dir, ended, pending, seed=1):
    """Appends ENDED COMPLETED/FAILED jobs, then PENDING ones, in one transaction. Pending jobs
    are held, wait for a --begin a day ahead, or depend (afterok) on the first pending job
    (held), so none may start; their reason is the one admission gives them. Returns the ids
    of pending held jobs nothing depends on (safe to cancel), newest last."""
    rng = random.Random(seed)
    con = sqlite3.connect(db, isolation_level=None)
    check_schema(con, db)
    (start_id,) = con.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM jobs").fetchone()
    uid = os.getuid()
    user = os.environ.get("USER") or "user"
    output = os.path.join(state_dir, "logs", "%j.out")
    env_json = json.dumps([f"{k}={v}" for k, v in os.environ.items()])
    now = time.time()
    day = 86400.0
    insert = (f"INSERT INTO jobs (id, {', '.join(COLUMNS)}) "
              f"VALUES ({', '.join('?' * (len(COLUMNS) + 1))})")

    def base(job_id, n):
        argv = job_argv(rng, n)
        name = rng.choice(NAMES) if rng.random() < 0.8 else os.path.basename(argv[0])
        return {"name": name, "argv": json.dumps(argv),
                "cwd": f"/home/{user}/projects/{rng.choice(PROJECTS)}", "uid": uid,
                "priority": rng.choice([0] * 8 + [-5, 5, 10, 100]), "quantum_ms": 20000,
                "gpu": "", "reason": "", "start_time": None, "end_time": None,
                "exit_code": None, "signal": None, "pid": None, "lease_seconds": 0.0,
                "wait_seconds": 0.0, "peak_bytes": 0, "kind": "submit", "output": output,
                "time_limit_ms": rng.choice([0, 0, 7200000, 86400000]), "kill_after_ms": 30000,
                "dependency": "", "held": 0, "begin_time": None, "end_request": "",
                "runner_pid": None, "runner_start": None, "slot": ""}

    rows, payloads, cancellable = [], [], []
    job_id = start_id
    for n in range(ended):  # submitted over [now - 31 d, now - 1 d], oldest first
        r = base(job_id, n)
        r["submit_time"] = now - 31 * day + 30 * day * n / max(1, ended) + rng.uniform(0, 5)
        r["start_time"] = r["submit_time"] + rng.expovariate(1 / 300.0)
        duration = min(12 * 3600.0, rng.lognormvariate(6.5, 1.2))
        r["end_time"] = r["start_time"] + duration
        if rng.random() < 0.85:
            r.update(state="COMPLETED", exit_code=0)
        elif rng.random() < 0.8:
            r.update(state="FAILED", exit_code=rng.choice([1, 1, 1, 2, 137]))
        else:
            r.update(state="FAILED", signal=rng.choice([9, 11, 6]))
        r.update(pid=rng.randrange(1000, 4000000), runner_pid=rng.randrange(1000, 4000000),
                 runner_start=rng.randrange(10**6, 10**9), slot="0",
                 lease_seconds=duration * rng.uniform(0.3, 0.95),
                 wait_seconds=duration * rng.uniform(0, 0.3),
                 peak_bytes=rng.randrange(1 << 28, 40 << 30))
        rows.append((job_id, *(r[c] for c in COLUMNS)))
        payloads.append((job_id, env_json, None))
        job_id += 1
    first_pending = job_id
    for k in range(pending):  # submitted over the last day
        r = base(job_id, ended + k)
        r["state"] = "PENDING"
        r["submit_time"] = now - day + day * k / max(1, pending)
        if k % 3 == 0:
            r.update(held=1, reason="JobHeldUser")
            if k > 0:
                cancellable.append(job_id)
        elif k % 3 == 1:
            r.update(begin_time=now + day + rng.uniform(0, day), reason="BeginTime")
        else:
            r.update(dependency=f"afterok:{first_pending}", reason="Dependency")
        rows.append((job_id, *(r[c] for c in COLUMNS)))
        payloads.append((job_id, env_json, None))
        job_id += 1
    con.execute("BEGIN IMMEDIATE")
    con.executemany(insert, rows)
    con.executemany(f"INSERT INTO job_payloads ({', '.join(PAYLOAD_COLUMNS)}) VALUES (?, ?, ?)",
                    payloads)
    con.execute("COMMIT")
    con.close()
    return cancellable
