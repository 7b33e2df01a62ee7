"""Issues 19 and 27: the daemon killed with SIGKILL at random moments while jobs are submitted,
held, released, cancelled and run. Afterwards no job is lost, none ran twice, no submission
was duplicated, every job's state agrees with what its process did, and the database passes
PRAGMA integrity_check.

Each job appends its id to one file when it runs, so runs are counted outside gshare.
Sized for CI (GSHARE_SOAK_JOBS=120 jobs, GSHARE_SOAK_KILLS=6 kills); test/bench/kill9_soak.sh
runs the same with 1,000 jobs and 20 kills (docs/benchmarks.md)."""
import collections
import os
import random
import signal
import sqlite3
import threading
import time
import unittest

from gshare_e2e import TestCase, proc_alive

JOBS = int(os.environ.get("GSHARE_SOAK_JOBS", "120"))
KILLS = int(os.environ.get("GSHARE_SOAK_KILLS", "6"))
SEED = int(os.environ.get("GSHARE_SOAK_SEED", str(int(time.time()))))
FINAL = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "LOST")


class Kill9SoakTest(TestCase):
    def test_kill9_soak(self):
        rnd = random.Random(SEED)
        print("seed %d, %d jobs, %d kills" % (SEED, JOBS, KILLS))
        h = self.harness(queue={"max_running": 8})
        h.start_daemon()
        runs = os.path.join(h.tmp, "runs")
        submitted = {}  # id -> "hold" | "run"
        lock = threading.Lock()
        errors = []

        def submit_some(n, seed):
            r = random.Random(seed)
            for _ in range(n):
                held = r.random() < 0.3
                args = (["--hold"] if held else []) + [
                    "--", "sh", "-c", 'echo "$GSHARE_JOB_ID" >> %s; sleep 0.0%d' % (runs, r.randint(0, 9))]
                res = h.gshare("submit", *args, timeout=120)
                with lock:
                    if res.returncode == 0 and res.stdout.strip().isdigit():
                        job = int(res.stdout)
                        if job in submitted:
                            errors.append("submit returned job %d twice" % job)
                        submitted[job] = "hold" if held else "run"
                    else:
                        errors.append("submit failed: rc %d %r" % (res.returncode, res.stderr))

        def killer():
            for _ in range(KILLS):
                time.sleep(rnd.uniform(0.3, 2.0))
                for pid in h.daemon_processes():
                    os.kill(pid, signal.SIGKILL)
                time.sleep(rnd.uniform(0.0, 0.3))
                if not h.daemon_processes():
                    h.gshare("daemon")  # as often as not, a client started it already

        def control():
            # Releases held jobs and cancels a few, while the kills go on.
            while not done.is_set():
                time.sleep(0.2)
                with lock:
                    ids = list(submitted)
                if not ids:
                    continue
                job = rnd.choice(ids)
                if submitted.get(job) == "hold" and rnd.random() < 0.7:
                    h.gshare("release", str(job))
                elif rnd.random() < 0.1:
                    h.gshare("cancel", str(job))
                    with lock:
                        submitted[job] = "cancel"

        done = threading.Event()
        threads = [threading.Thread(target=submit_some, args=(JOBS // 4, SEED + i)) for i in range(4)]
        threads.append(threading.Thread(target=killer))
        ctl = threading.Thread(target=control)
        for t in threads + [ctl]:
            t.start()
        for t in threads:
            t.join()
        done.set()
        ctl.join()
        self.assertEqual(errors, [], "\n".join(errors))
        self.assertEqual(len(submitted), JOBS // 4 * 4)

        # Whatever is still held is released now; then everything ends.
        h.gshare("release", *[str(j) for j in submitted])
        deadline = time.monotonic() + 240
        while True:
            jobs = h.queue_jobs(timeout=120)
            if all(jobs.get(j, {}).get("state") in FINAL for j in submitted) or time.monotonic() > deadline:
                break
            time.sleep(0.5)

        counts = collections.Counter()
        if os.path.exists(runs):
            with open(runs) as f:
                counts.update(int(line) for line in f if line.strip().isdigit())
        states = collections.Counter(jobs[j]["state"] if j in jobs else "missing" for j in submitted)
        print("states %s, runs %d" % (dict(states), sum(counts.values())))
        # No duplicated submission: every job in the queue came from one successful submit.
        self.assertEqual(sorted(jobs), sorted(submitted), "jobs in the queue that no submit returned")
        for j in submitted:
            state = jobs[j]["state"]
            self.assertIn(state, FINAL, "job %d never ended" % j)
            self.assertNotEqual(state, "LOST", "job %d was lost" % j)
            self.assertLessEqual(counts[j], 1, "job %d ran %d times" % (j, counts[j]))
            if state == "COMPLETED":
                self.assertEqual(counts[j], 1, "job %d COMPLETED without running" % j)
            else:
                self.assertEqual(state, "CANCELLED", "job %d: %s" % (j, jobs[j]))
        db = sqlite3.connect(os.path.join(h.state_dir, "gshare.db"))
        self.assertEqual(db.execute("PRAGMA integrity_check").fetchone()[0], "ok")
        db.close()
        for pid in h.daemon_processes():
            self.assertTrue(proc_alive(pid))


if __name__ == "__main__":
    unittest.main()
