"""Exclusive mode: two jobs started together never run kernels at the same time, and the
lease passes back and forth every quantum (round robin)."""
import unittest

from gshare_e2e import FAKE_APP, TestCase, overlaps

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

    def test_multi_process_job(self):
        # The lease belongs to a job, i.e. all of its processes: two fake_apps under one
        # `gshare run` run together, and never together with the other job.
        h = self.harness()
        h.start_daemon()
        app = "%s --kernels 20 --kernel-ms 30" % FAKE_APP
        multi = h.start_run(["sh", "-c", "%s & %s --route gpa; wait" % (app, app)],
                            QUANTUM + ["-J", "multi"], name="multi")
        other = h.start_fake(["--kernels", KERNELS, "--kernel-ms", KERNEL_MS], QUANTUM, name="other")
        self.assertEqual(multi.wait(120), 0, multi.stderr)
        self.assertEqual(multi.stdout.count("fake_app: done 20"), 2, multi.stdout)
        h.assert_done(other, KERNELS)
        po = other.child_pid()
        ko = h.ops("K", po)
        km = [k for k in h.ops("K") if k.pid != po]
        pids = sorted({k.pid for k in km})
        self.assertEqual((len(ko), len(km), len(pids)), (KERNELS, 40, 2))
        h.assert_exclusive(km, ko, min_switches=2)
        m1 = [k for k in km if k.pid == pids[0]]
        m2 = [k for k in km if k.pid == pids[1]]
        self.assertGreater(len(overlaps(m1, m2)), 0, "the job's two processes never ran together")
        jobs = {j["name"]: j for j in h.status()["jobs"]}
        self.assertEqual(sorted(jobs), ["multi", "other"])  # one job, not one per process
        self.assertEqual(jobs["multi"]["state"], "COMPLETED")


if __name__ == "__main__":
    unittest.main()
