"""`gshare scheduler off|on`: off, jobs run unarbitrated and their kernels overlap (so the
lease gate is what serializes them); on again, new jobs take turns."""
import time
import unittest

from gshare_e2e import TestCase, overlaps

# 3 s of kernels per job: the second job starts before the first ends even on a loaded machine,
# so with gating off they overlap.
KERNELS = 100
QUANTUM = ["--quantum", "200ms"]


class SchedulerToggleTest(TestCase):
    def pair(self, h, tag):
        kernels = KERNELS
        args = ["--kernels", kernels, "--kernel-ms", 30]
        a = h.start_fake(args, QUANTUM, name=tag + "a")
        b = h.start_fake(args + ["--route", "gpa"], QUANTUM, name=tag + "b")
        h.assert_done(a, kernels)
        h.assert_done(b, kernels)
        ka, kb = h.ops("K", a.child_pid()), h.ops("K", b.child_pid())
        self.assertEqual((len(ka), len(kb)), (kernels, kernels))
        return ka, kb

    def test_off_then_on(self):
        h = self.harness()
        h.start_daemon()
        r = h.gshare("scheduler", "off")
        self.assertEqual(r.returncode, 0, r.stderr)
        st = h.status()
        self.assertEqual(st["daemon"]["scheduler"], "off")
        ka, kb = self.pair(h, "off")
        self.assertGreater(len(overlaps(ka, kb)), 0,
                           "with the scheduler off the two jobs should run at the same time")

        r = h.gshare("scheduler", "on")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(h.status()["daemon"]["scheduler"], "on")
        ka, kb = self.pair(h, "on")
        h.assert_exclusive(ka, kb, min_switches=2)
        self.assertEqual(h.status()["gpus"][0]["mode"], "exclusive")

    def test_toggle_while_jobs_run(self):
        # time.monotonic_ns() is CLOCK_MONOTONIC, the fake log's clock.
        h = self.harness()
        h.start_daemon()
        args = ["--kernels", 60, "--kernel-ms", 30]
        a = h.start_fake(args, QUANTUM, name="a")
        b = h.start_fake(args, QUANTUM, name="b")
        pa, pb = a.child_pid(), b.child_pid()
        h.wait_kernels(pa, 1)
        h.wait_kernels(pb, 1)
        # The daemon turns gating off before it replies: kernels that start between its reply
        # and our clock reading may overlap, so "before" ends when we asked.
        t_asked = time.monotonic_ns()
        self.assertEqual(h.gshare("scheduler", "off").returncode, 0)
        t_off = time.monotonic_ns()
        after_off = lambda pid: [k for k in h.ops("K", pid) if k.start > t_off]
        h.wait_for(lambda: len(after_off(pa)) >= 5 and len(after_off(pb)) >= 5, 30,
                   "both jobs running with the scheduler off")
        self.assertEqual(h.gshare("scheduler", "on").returncode, 0)
        t_on = time.monotonic_ns()
        self.assertIsNone(a.poll())
        self.assertIsNone(b.poll())
        h.assert_done(a, 60)
        h.assert_done(b, 60)
        ka, kb = h.ops("K", pa), h.ops("K", pb)

        def window(ops, lo, hi):
            return [k for k in ops if k.start >= lo and k.end <= hi]
        self.assertEqual(overlaps(window(ka, 0, t_asked), window(kb, 0, t_asked)), [],
                         "overlap before the scheduler went off")
        self.assertGreater(len(overlaps(window(ka, t_off, t_on), window(kb, t_off, t_on))), 0,
                           "no overlap while the scheduler was off")
        # On again: the jobs drain and take turns. 500 ms covers the drain of the kernel in
        # flight (30 ms); later kernels never overlap and the lease still alternates.
        settle = t_on + 500 * 1000 * 1000
        late_a, late_b = window(ka, settle, 1 << 62), window(kb, settle, 1 << 62)
        self.assertTrue(late_a and late_b, "too little work left after the scheduler went on")
        h.assert_exclusive(late_a, late_b, min_switches=2)

    def test_disabled_by_config(self):
        h = self.harness(config={"enabled": False})
        h.start_daemon()
        self.assertEqual(h.status()["daemon"]["scheduler"], "off")
        ka, kb = self.pair(h, "cfg")
        self.assertGreater(len(overlaps(ka, kb)), 0)


if __name__ == "__main__":
    unittest.main()
