"""Daemon restart under a running job: the job fails open (one warning), keeps running, and
reconnects to the next daemon, after which it is gated again; the dead daemon's running job
is not left RUNNING in the database."""
import time
import unittest

from gshare_e2e import TestCase, overlaps


class DaemonRestartTest(TestCase):
    def test_job_survives_and_reconnects(self):
        h = self.harness(config={"quantum": "200ms"})
        first = h.start_daemon()
        a = h.start_fake(["--kernels", 150, "--kernel-ms", 30], name="a")
        pa = a.child_pid()
        h.wait_kernels(pa, 3)
        r = h.gshare("daemon", "stop")
        self.assertEqual(r.returncode, 0, r.stderr)
        h.wait_for(lambda: first not in h.daemon_processes(), 30, "the first daemon to exit")
        second = h.start_daemon()
        self.assertNotEqual(first, second)
        b = h.start_fake(["--kernels", 100, "--kernel-ms", 30], name="b")
        pb = b.child_pid()
        h.wait_for(lambda: "reconnected" in a.stderr, 30, "job a to reconnect\n" + a.stderr)
        t_back = time.monotonic_ns()
        self.assertIsNone(b.poll(), "b ended before a reconnected: nothing left to check")
        h.assert_done(a, 150)
        h.assert_done(b, 100)

        lines = [l for l in a.stderr.splitlines() if "gshare:" in l]
        self.assertEqual(len(lines), 2, a.stderr)
        self.assertIn("without GPU sharing", lines[0])
        self.assertIn("reconnected", lines[1])
        # Gated again once back (500 ms for the first grant and the drain).
        settle = t_back + 500 * 1000 * 1000
        ka = [k for k in h.ops("K", pa) if k.start > settle]
        kb = [k for k in h.ops("K", pb) if k.start > settle]
        self.assertTrue(ka and kb, "too little work left after the reconnect")
        self.assertEqual(overlaps(ka, kb), [])
        rec = h.job_record(lambda j: j["name"] == "a")
        self.assertIsNotNone(rec)
        self.assertNotEqual(rec["state"], "RUNNING")


if __name__ == "__main__":
    unittest.main()
