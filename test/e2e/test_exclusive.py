"""Exclusive mode: two jobs started together never run kernels at the same time, and the
lease passes back and forth every quantum (round robin)."""
import unittest

from gshare_e2e import TestCase

KERNELS = 30
KERNEL_MS = 30
QUANTUM = ["--quantum", "300ms"]


class ExclusiveTest(TestCase):
    def pair(self, a_args, b_args, a_linked=False, b_linked=False, threads=1):
        h = self.harness()
        h.start_daemon()
        common = ["--kernels", KERNELS, "--kernel-ms", KERNEL_MS]
        if threads > 1:
            common += ["--threads", threads]
        a = h.start_fake(a_args + common, QUANTUM, linked=a_linked, name="a")
        b = h.start_fake(b_args + common, QUANTUM, linked=b_linked, name="b")
        h.assert_done(a, KERNELS * threads)
        h.assert_done(b, KERNELS * threads)
        a_ops, b_ops = h.ops("K", a.child_pid()), h.ops("K", b.child_pid())
        self.assertEqual(len(a_ops), KERNELS * threads)
        self.assertEqual(len(b_ops), KERNELS * threads)
        h.assert_exclusive(a_ops, b_ops, min_switches=2)

    def test_gpa_and_dlsym(self):
        self.pair(["--route", "gpa"], ["--route", "dlsym"])

    def test_linked_and_gpa_per_thread(self):
        self.pair(["--route", "linked"], ["--route", "gpa", "--per-thread"], a_linked=True)

    def test_two_threads_each(self):
        self.pair(["--route", "gpa"], ["--route", "dlsym"], threads=2)


if __name__ == "__main__":
    unittest.main()
