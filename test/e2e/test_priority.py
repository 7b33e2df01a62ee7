"""Strict priority: a higher-priority job that arrives while a low-priority job holds the lease
(with a quantum far longer than the test) takes the GPU at once and keeps it until it is done."""
import unittest

from gshare_e2e import TestCase


class PriorityTest(TestCase):
    def test_high_priority_preempts_low(self):
        h = self.harness(config={"quantum": "60s"})
        h.start_daemon()
        low = h.start_fake(["--kernels", 60, "--kernel-ms", 30], ["-p", "0"], name="low")
        low_pid = low.child_pid()
        h.wait_kernels(low_pid, 5)  # low holds the lease and is well under way
        high = h.start_fake(["--kernels", 10, "--kernel-ms", 30], ["-p", "5"], name="high")
        high_pid = high.child_pid()
        h.assert_done(high, 10)
        h.assert_done(low, 60)

        lo, hi = h.ops("K", low_pid), h.ops("K", high_pid)
        self.assertEqual((len(lo), len(hi)), (60, 10))
        h.assert_exclusive(lo, hi, min_switches=0)
        hi_first, hi_last_end = hi[0].start, max(o.end for o in hi)
        # After the high job's first kernel, no low kernel starts until its last one ended
        # (the low kernel in flight when the DROP came may finish: it started earlier).
        intruders = [o for o in lo if hi_first <= o.start < hi_last_end]
        self.assertEqual(intruders, [], "low kernels ran while the high job held the GPU")
        # The low job was preempted, not merely finished: it still had work after.
        after = [o for o in lo if o.start >= hi_last_end]
        self.assertGreater(len(after), 0, "the high job waited for the low one to finish")
        before = [o for o in lo if o.start < hi_first]
        self.assertGreaterEqual(len(before), 5)
        self.assertEqual(len(before) + len(after), 60)


if __name__ == "__main__":
    unittest.main()
