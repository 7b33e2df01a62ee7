"""cuGetProcAddress at several CUDA versions (with and without per-thread default stream, and
cuLaunchKernelEx): the shim must see the launches that come through pointers the driver hands
out. Proof: paired with a concurrent job, no kernel overlaps the other job's, and the shim's
census (GSHARE_CENSUS) counts exactly the launches the job made, under the expected export."""
import unittest

from gshare_e2e import TestCase

KERNELS = 25
KERNEL_MS = 30
QUANTUM = ["--quantum", "200ms"]
LAUNCH_EXPORTS = ("cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz")


def variant(version, per_thread=False, ex=False):
    args = ["--route", "gpa", "--gpa-version", version]
    if per_thread:
        args.append("--per-thread")
    if ex:
        args.append("--ex")
    export = ("cuLaunchKernelEx" if ex else "cuLaunchKernel") + ("_ptsz" if per_thread else "")
    return args, export


class GetProcAddressVersionsTest(TestCase):
    def pair(self, a, b):
        h = self.harness(census=True)
        h.start_daemon()
        common = ["--kernels", KERNELS, "--kernel-ms", KERNEL_MS]
        (a_args, a_export), (b_args, b_export) = a, b
        ja = h.start_fake(a_args + common, QUANTUM, name="a")
        jb = h.start_fake(b_args + common, QUANTUM, name="b")
        h.assert_done(ja, KERNELS)
        h.assert_done(jb, KERNELS)
        a_ops, b_ops = h.ops("K", ja.child_pid()), h.ops("K", jb.child_pid())
        self.assertEqual(len(a_ops), KERNELS)
        self.assertEqual(len(b_ops), KERNELS)
        h.assert_exclusive(a_ops, b_ops, min_switches=2)
        for job, export in ((ja, a_export), (jb, b_export)):
            counts = h.census_counts(job.child_pid())
            launches = {k: v for k, v in counts.items() if k in LAUNCH_EXPORTS}
            self.assertEqual(launches, {export: KERNELS},
                             "census of %s %s: %s" % (job.name, job.argv, counts))
            # The driver ran what the shim counted, through the same revision.
            self.assertEqual({o.name for o in h.ops("K", job.child_pid())}, {export})
            # Its context synchronizations were seen too: at CUDA 13, "cuCtxSynchronize"
            # resolves to cuCtxSynchronize_v2, which the shim must count as waiting, not idle.
            version = int(job.argv[job.argv.index("--gpa-version") + 1])
            sync = "cuCtxSynchronize_v2" if version >= 13000 else "cuCtxSynchronize"
            self.assertGreaterEqual(counts.get(sync, 0), 1,
                                    "census of %s %s: %s" % (job.name, job.argv, counts))

    def test_11030(self):
        self.pair(variant(11030), variant(11030, per_thread=True))

    def test_12000(self):
        self.pair(variant(12000), variant(12000, per_thread=True))

    def test_13000(self):
        self.pair(variant(13000), variant(13000, per_thread=True))

    def test_launch_kernel_ex(self):
        self.pair(variant(12000, ex=True), variant(13000, per_thread=True, ex=True))

    def test_launch_kernel_ex_swapped(self):
        self.pair(variant(12000, per_thread=True, ex=True), variant(13000, ex=True))


if __name__ == "__main__":
    unittest.main()
