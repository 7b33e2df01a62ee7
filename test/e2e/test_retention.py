"""Issue 27: what the daemon keeps is bounded ([retention]).

Ended jobs past `max_ended_jobs` (the last to end stay) are removed by the daemon itself, at
start and every 10 minutes, exactly as `gshare clean` removes them: the row, the log gshare
placed, never a user's own --output file, never a job that a pending job depends on. The
detached daemon's log is rotated past `daemon_log_size` (one older copy, daemon.log.1); its
lines start with their time."""
import os
import unittest

from gshare_e2e import TestCase


class RetentionTest(TestCase):
    def test_retention_bounds_ended_jobs_and_the_daemon_log(self):
        h = self.harness(retention={"max_ended_jobs": 3, "daemon_log_size": "1KiB"})
        h.start_daemon()
        own = os.path.join(h.tmp, "own.out")
        ids = [h.submit("--", "echo", "job%d" % i) for i in range(5)]
        ids.append(h.submit("-o", own, "--", "echo", "mine"))
        ended = {i: h.wait_state(i, "COMPLETED")["end_time"] for i in ids}
        # The first job stays whatever its age: a held job waits on it.
        waiting = h.submit("--hold", "--dependency", "afterok:%d" % ids[0], "--", "true")
        logs = os.path.join(h.state_dir, "logs")
        for i in ids[:5]:
            self.assertTrue(os.path.exists(os.path.join(logs, "%d.out" % i)))
        with open(h.daemon_log, "a") as f:  # past daemon_log_size, whatever the daemon wrote
            f.write("filler line before the rotation\n" * 64)

        self.assertEqual(h.gshare("daemon", "stop").returncode, 0)
        h.start_daemon()  # retention applies at start

        newest = set(sorted(ids, key=lambda i: ended[i], reverse=True)[:3])
        kept = newest | {ids[0]}
        jobs = h.queue_jobs()
        self.assertEqual({i for i in ids if i in jobs}, kept)
        self.assertEqual(jobs[waiting]["state"], "PENDING")
        for i in ids[:5]:
            self.assertEqual(os.path.exists(os.path.join(logs, "%d.out" % i)), i in kept, i)
        self.assertTrue(os.path.exists(own), "a user's own output file is theirs to remove")

        with open(h.daemon_log + ".1") as f:
            self.assertIn("filler line before the rotation", f.read())
        with open(h.daemon_log) as f:
            fresh = f.read()
        self.assertNotIn("filler", fresh)
        self.assertLess(len(fresh), 1024)
        self.assertIn("daemon.log passed 1024 bytes", fresh)
        # A detached daemon's lines carry their time, to the millisecond.
        for line in fresh.splitlines():
            self.assertRegex(line, r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] gshare: \S")

    def test_retention_off_keeps_everything(self):
        h = self.harness(retention={"max_ended_jobs": 0, "ended_jobs": "0"})
        h.start_daemon()
        ids = [h.submit("--", "true") for _ in range(4)]
        for i in ids:
            h.wait_state(i, "COMPLETED")
        self.assertEqual(h.gshare("daemon", "stop").returncode, 0)
        h.start_daemon()
        self.assertTrue(set(ids) <= set(h.queue_jobs()))


if __name__ == "__main__":
    unittest.main()
