"""Early release: while another job waits, a holder gives the lease back at the start of an
idle gap that its earlier gaps say will outlast both handoffs, long before idle_release; and a
holder waiting in a synchronizing call for its own GPU work is busy, not idle."""
import unittest

from gshare_e2e import TestCase

# A holder with long CPU phases: 6 kernels of 100 ms, each synchronized, 1.2 s apart.
GAPPY = ["--kernels", 6, "--kernel-ms", 100, "--sync-every", 1, "--gap-ms", 1200]
WAITER = ["--kernels", 6, "--kernel-ms", 100, "--sync-every", 1, "--gap-ms", 1200]


class EarlyReleaseTest(TestCase):
    def start_pair(self, h, a_args, b_args):
        h.start_daemon()
        a = h.start_fake(a_args, name="a")
        a_pid = a.child_pid()
        h.wait_kernels(a_pid, 1, timeout=30)
        b = h.start_fake(b_args, name="b")
        return a, a_pid, b, b.child_pid()

    def test_waiter_runs_in_holders_long_gaps(self):
        # idle_release and the quantum alone would keep the GPU with A for its whole run.
        h = self.harness(config={"idle_release": "10s", "quantum": "60s"})
        a, a_pid, b, b_pid = self.start_pair(h, GAPPY, WAITER)
        h.assert_done(a, 6, timeout=60)
        h.assert_done(b, 6, timeout=60)
        ka, kb = h.ops("K", a_pid), h.ops("K", b_pid)
        self.assertEqual((len(ka), len(kb)), (6, 6))
        h.assert_exclusive(ka, kb, min_switches=4)
        # A learns its gaps from the first one, then leaves the GPU at each: B's kernels run
        # in A's gaps, not after A's last kernel.
        in_gaps = [k for k in kb if k.end < ka[-1].start]
        self.assertGreaterEqual(len(in_gaps), 3, "B did not run in A's gaps\n" + h.diagnostics())

    def test_off_keeps_the_lease_through_gaps(self):
        h = self.harness(config={"idle_release": "10s", "quantum": "60s",
                                 "early_release": False})
        a, a_pid, b, b_pid = self.start_pair(h, GAPPY, WAITER)
        h.assert_done(a, 6, timeout=60)
        h.assert_done(b, 6, timeout=60)
        ka, kb = h.ops("K", a_pid), h.ops("K", b_pid)
        self.assertGreater(kb[0].start, ka[-1].end,
                           "B ran in A's gaps with early_release off\n" + h.diagnostics())

    def test_synchronizing_holder_is_not_idle(self):
        # A's kernels outlast idle_release; A waits for each in cuCtxSynchronize, then submits
        # the next 50 ms later. Waiting for its own GPU work keeps the lease.
        h = self.harness(config={"idle_release": "300ms", "quantum": "60s"})
        a, a_pid, b, b_pid = self.start_pair(
            h, ["--kernels", 3, "--kernel-ms", 1200, "--sync-every", 1, "--gap-ms", 50],
            ["--kernels", 4, "--kernel-ms", 20])
        h.assert_done(a, 3, timeout=60)
        h.assert_done(b, 4, timeout=60)
        ka, kb = h.ops("K", a_pid), h.ops("K", b_pid)
        self.assertGreater(kb[0].start, ka[-1].end,
                           "A lost the lease while synchronizing\n" + h.diagnostics())


if __name__ == "__main__":
    unittest.main()
