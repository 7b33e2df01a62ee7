"""Fork safety: a job that forks a CUDA-free child (like a DataLoader worker) after it
initialised CUDA still shares the GPU correctly, and so does its partner."""
import unittest

from gshare_e2e import TestCase

KERNELS = 25
QUANTUM = ["--quantum", "200ms"]


class ForkTest(TestCase):
    def check(self, fork_args, linked=False):
        h = self.harness(census=True)
        h.start_daemon()
        args = ["--kernels", KERNELS, "--kernel-ms", 30]
        a = h.start_fake(args + ["--fork"] + fork_args, QUANTUM, linked=linked, name="forker")
        b = h.start_fake(args + ["--route", "dlsym"], QUANTUM, name="other")
        h.assert_done(a, KERNELS)
        h.assert_done(b, KERNELS)
        self.assertNotIn("gshare:", a.stderr, "the shim complained in the forking job")
        ka, kb = h.ops("K", a.child_pid()), h.ops("K", b.child_pid())
        self.assertEqual((len(ka), len(kb)), (KERNELS, KERNELS))
        # Only the two jobs ran anything: the forked child launched nothing.
        self.assertEqual({o.pid for o in h.ops(None)}, {a.child_pid(), b.child_pid()})
        h.assert_exclusive(ka, kb, min_switches=2)
        # The shim counted every launch of the parent.
        export = "cuLaunchKernel" + ("_ptsz" if "--per-thread" in fork_args else "")
        self.assertEqual(h.census_counts(a.child_pid()).get(export, 0), KERNELS)
        # Both jobs' records show clean exits.
        for name in ("forker", "other"):
            rec = h.job_record(lambda j: j["name"] == name)
            self.assertEqual((rec["state"], rec["exit_code"]), ("COMPLETED", 0))

    def test_fork_dlsym(self):
        self.check(["--route", "dlsym"])

    def test_fork_linked_per_thread(self):
        self.check(["--route", "linked", "--per-thread"], linked=True)


if __name__ == "__main__":
    unittest.main()
