"""Stream capture: a job that captures a CUDA graph while another job shares the GPU is not
blocked by the capture, and its graph launches (G lines) never overlap the other job."""
import unittest

from gshare_e2e import TestCase, overlaps

QUANTUM = ["--quantum", "200ms"]


class CaptureTest(TestCase):
    def check(self, capture_args, linked=False):
        h = self.harness(census=True)
        h.start_daemon()
        other = h.start_fake(["--kernels", 80, "--kernel-ms", 25, "--route", "gpa"], QUANTUM, name="other")
        cap = h.start_fake(["--kernels", 10, "--kernel-ms", 30, "--capture"] + capture_args, QUANTUM,
                           linked=linked, name="capture")
        h.assert_done(cap, 10, timeout=60)
        h.assert_done(other, 80)
        cp, op = cap.child_pid(), other.child_pid()
        graphs = h.ops("G", cp)
        self.assertEqual(len(graphs), 2, "two graph launches expected\n" + h.diagnostics())
        for g in graphs:  # three captured 30 ms kernels each
            self.assertGreaterEqual(g.end - g.start, 80 * 1000 * 1000)
        ck, ok = h.ops("K", cp), h.ops("K", op)
        self.assertEqual((len(ck), len(ok)), (10, 80))
        # Captured launches are recorded, not executed: only the 10 direct kernels ran as K.
        bad = overlaps(graphs, ok)
        self.assertEqual(bad, [], "graph launches overlapped the other job's kernels")
        h.assert_exclusive(ck + graphs, ok, min_switches=2)
        # The other job was competing for the GPU around the graph launches.
        self.assertLess(ok[0].start, graphs[0].start)
        self.assertGreater(ok[-1].end, graphs[-1].end)
        counts = h.census_counts(cp)
        launches = sum(v for k, v in counts.items() if k.startswith("cuLaunchKernel"))
        self.assertEqual(launches, 10 + 3, counts)  # 10 direct + 3 captured
        graph_launches = sum(v for k, v in counts.items() if k.startswith("cuGraphLaunch"))
        self.assertEqual(graph_launches, 2, counts)

    def test_capture_legacy_route(self):
        self.check(["--route", "dlsym"])

    def test_capture_per_thread_gpa(self):
        self.check(["--route", "gpa", "--per-thread"])


if __name__ == "__main__":
    unittest.main()
