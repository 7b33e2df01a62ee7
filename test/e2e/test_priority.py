"""Strict priority: a higher-priority job that arrives while a low-priority job holds the lease
(with a quantum far longer than the test) takes the GPU at once and keeps it until it is done."""
import unittest

from gshare_e2e import TestCase

LOW = 80  # 2.4 s of work: plenty of time for the high job to arrive


class PriorityTest(TestCase):
    def test_high_priority_preempts_low(self):
        h = self.harness(config={"quantum": "60s"})
        h.start_daemon()
        low = h.start_fake(["--kernels", LOW, "--kernel-ms", 30], ["-p", "0"], name="low")
        low_pid = low.child_pid()
        h.wait_kernels(low_pid, 5)  # low holds the lease and is well under way
        high = h.start_fake(["--kernels", 10, "--kernel-ms", 30], ["-p", "5"], name="high")
        high_pid = high.child_pid()
        h.assert_done(high, 10)
        h.assert_done(low, LOW)

        lo, hi = h.ops("K", low_pid), h.ops("K", high_pid)
        self.assertEqual((len(lo), len(hi)), (LOW, 10))
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
        self.assertEqual(len(before) + len(after), LOW)

    def test_lower_priority_waits_past_the_quantum(self):
        # Strict priority: a lower-priority waiter neither preempts nor gets the GPU when the
        # higher-priority holder's quantum (200 ms here) runs out.
        h = self.harness()
        h.start_daemon()
        high = h.start_fake(["--kernels", 40, "--kernel-ms", 30], ["-p", "5", "--quantum", "200ms"],
                            name="high")
        hp = high.child_pid()
        h.wait_kernels(hp, 3)
        low = h.start_fake(["--kernels", 10, "--kernel-ms", 30], ["-p", "-5", "--quantum", "200ms"],
                           name="low")
        lp = low.child_pid()
        h.assert_done(low, 10)
        h.assert_done(high, 40)
        hi, lo = h.ops("K", hp), h.ops("K", lp)
        self.assertEqual((len(hi), len(lo)), (40, 10))
        self.assertGreater(lo[0].start, max(o.end for o in hi),
                           "the low-priority job ran before the high one was done")
        rec = h.job_record(lambda j: j["name"] == "low")
        self.assertEqual(rec["priority"], -5)
        self.assertGreater(rec["wait_seconds"], 0)


if __name__ == "__main__":
    unittest.main()
