"""Idle release: a holder that submits nothing for idle_release gives the lease back early,
so another job runs in its idle gaps instead of waiting out a 60 s quantum."""
import unittest

from gshare_e2e import TestCase


class IdleReleaseTest(TestCase):
    def test_waiter_runs_in_holders_gaps(self):
        h = self.harness(config={"idle_release": "200ms", "quantum": "60s"})
        h.start_daemon()
        a = h.start_fake(["--kernels", 3, "--kernel-ms", 500, "--gap-ms", 1000], name="a")
        a_pid = a.child_pid()

        def a_holds():
            rec = h.job_record(lambda j: j.get("name") == "a")
            return rec is not None and rec.get("lease") == "holding"
        h.wait_for(a_holds, 30, "job a holding the lease")
        b = h.start_fake(["--kernels", 8, "--kernel-ms", 30], name="b")
        b_pid = b.child_pid()
        h.assert_done(b, 8, timeout=30)
        self.assertIsNone(a.poll(), "A ended before B: B did not run in A's gaps\n" + h.diagnostics())
        h.assert_done(a, 3)

        ka, kb = h.ops("K", a_pid), h.ops("K", b_pid)
        self.assertEqual((len(ka), len(kb)), (3, 8))
        h.assert_exclusive(ka, kb, min_switches=2)
        # B arrived while A held the lease: it waited for A's kernel and idle time, then every
        # B kernel ran in a gap of A, before A's last kernel.
        self.assertGreater(kb[0].start, ka[0].end, "B ran while A held the lease")
        self.assertLess(max(o.end for o in kb), ka[-1].start,
                        "B waited for A to finish instead of using its idle time")
        rec_b = h.job_record(lambda j: j.get("name") == "b")
        self.assertGreater(rec_b["wait_seconds"], 0)
        # A was never held off for a quantum: its gaps stayed ~1 s (generous bound; waiting
        # out the 60 s quantum or a stuck lease would show up as a much longer gap).
        for prev, nxt in zip(ka, ka[1:]):
            self.assertLess((nxt.start - prev.end) / 1e9, 10.0, "A waited long for the lease")


if __name__ == "__main__":
    unittest.main()
