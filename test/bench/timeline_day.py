#!/usr/bin/env python3
"""A day of a GPU's timeline, to look at `gshare timeline`'s SVG at the scale people open it.

    python3 test/bench/timeline_day.py OUT_DIR        # on the fake driver, after a build

Runs the daemon on the fake driver (test/e2e's harness, GSHARE_BUILD as there), two real jobs
taking turns, stops it, then adds a made-up day to its database's timeline: about twenty
submitted jobs of 10-90 minutes one after another on the fake GPU, four in ten waiting 5-300 s
for the lease, and short jobs that never use the GPU (seeded, the same every run). Restarts the
daemon and writes OUT_DIR/day.svg (`timeline -S now-1day`) and OUT_DIR/default.svg (no window:
the last hour with events). Render them with `rsvg-convert -w 1400 day.svg -o day.png`.
Exit: 0 with both pictures written, 1 otherwise.
"""
import os
import random
import sqlite3
import sys
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from gshare_e2e import TestCase  # noqa: E402

US = 1_000_000
OUT = None


def made_up_day(gpu, uid, now_us, seed=1):
    """Timeline rows (time_us, kind, gpu, job_id, uid, pid, bytes, ms, detail) of one day."""
    rnd = random.Random(seed)
    rows, job, t = [], 1000, now_us - 24 * 3600 * US
    while t < now_us - 3600 * US:
        job += 1
        start = t + rnd.randint(0, 40) * 60 * US
        end = start + rnd.randint(10, 90) * 60 * US
        rows.append((start, "job_start", "", job, uid, 0, 0, rnd.randint(0, 600) * 1000, "submit"))
        grant = start + 2 * US
        if rnd.random() < 0.4:
            wait = rnd.randint(5, 300) * US
            rows.append((grant, "wait", gpu, job, uid, 0, 0, 0, ""))
            rows.append((grant + wait, "waited", gpu, job, uid, 0, 0, wait / 1000, "granted"))
            grant += wait
        rows.append((grant, "grant", gpu, job, uid, 0, 0, 0, "exclusive"))
        rows.append((end, "release", gpu, job, uid, 0, 0, 0, "exit"))
        rows.append((end + US, "job_end", "", job, uid, 0, 0, 0, "COMPLETED"))
        if rnd.random() < 0.5:  # a job that never uses the GPU
            job += 1
            s = start + rnd.randint(1, 30) * 60 * US
            rows.append((s, "job_start", "", job, uid, 0, 0, 0, "submit"))
            rows.append((s + 120 * US, "job_end", "", job, uid, 0, 0, 0, "COMPLETED"))
        t = end
    return rows


class Day(TestCase):
    def test_day(self):
        h = self.harness()
        h.start_daemon()
        jobs = [h.start_fake(["--kernels", 8, "--kernel-ms", 30], ["--quantum", "200ms"],
                             name=n) for n in ("train-a", "train-b")]
        for j in jobs:
            h.assert_done(j, 8)
        self.assertEqual(h.gshare("daemon", "stop").returncode, 0)
        dbs = [os.path.join(r, f) for r, _, fs in os.walk(h.tmp) for f in fs if f.endswith(".db")]
        self.assertEqual(len(dbs), 1, dbs)
        con = sqlite3.connect(dbs[0])
        gpu, uid = con.execute("select gpu, uid from timeline where gpu != '' limit 1").fetchone()
        con.executemany("insert into timeline(time_us, kind, gpu, job_id, uid, pid, bytes, ms, "
                        "detail) values (?,?,?,?,?,?,?,?,?)",
                        made_up_day(gpu, uid, int(time.time() * US)))
        con.commit()
        con.close()
        h.start_daemon()
        for name, args in (("day.svg", ["-S", "now-1day"]), ("default.svg", [])):
            r = h.gshare("timeline", *args, "-o", os.path.join(OUT, name))
            self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.splitlines()[3].strip())
    OUT = os.path.abspath(sys.argv[1])
    os.makedirs(OUT, exist_ok=True)
    ok = unittest.main(argv=[sys.argv[0]], exit=False).result.wasSuccessful()
    sys.exit(0 if ok else 1)
