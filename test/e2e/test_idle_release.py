"""Idle release: a holder that submits nothing for idle_release gives the lease back early,
so another job runs in its idle gaps instead of waiting out a 60 s quantum."""
import unittest

from gshare_e2e import TestCase


class IdleReleaseTest(TestCase):
    def test_waiter_runs_in_holders_gaps(self):
        h = self.harness(config={"idle_release": "200ms", "quantum": "60s"})
        h.start_daemon()
        a = h.start_fake(["--kernels", 3, "--kernel-ms", 30, "--gap-ms", 1500], name="a")
        a_pid = a.child_pid()
        h.wait_kernels(a_pid, 1)
        b = h.start_fake(["--kernels", 8, "--kernel-ms", 30], name="b")
        b_pid = b.child_pid()
        h.assert_done(b, 8, timeout=30)
        self.assertIsNone(a.poll(), "A ended before B: B did not run in A's gaps\n" + h.diagnostics())
        h.assert_done(a, 3)

        ka, kb = h.ops("K", a_pid), h.ops("K", b_pid)
        self.assertEqual((len(ka), len(kb)), (3, 8))
        h.assert_exclusive(ka, kb, min_switches=2)
        # Every B kernel lies in a gap of A: after A's first kernel, before A's last one.
        self.assertGreater(kb[0].start, ka[0].end)
        self.assertLess(max(o.end for o in kb), ka[-1].start,
                        "B waited for A to finish instead of using its idle time")
        # A was never held off for a quantum: its gaps stayed ~1.5 s (generous bound; a DROP for
        # the 60 s quantum or a stuck lease would show up as a much longer wait).
        for prev, nxt in zip(ka, ka[1:]):
            self.assertLess((nxt.start - prev.end) / 1e9, 10.0, "A waited long for the lease")


if __name__ == "__main__":
    unittest.main()
