"""Phase staggering in shared mode: two jobs that share the GPU and run their steps in lock
step (their idle gaps at the same time) are moved apart, by a stretch of one job's next gap;
jobs whose gaps already fall apart are left alone, a job alone on the GPU reports no gaps,
and [scheduler] stagger = false turns it off. The fake driver's kernels sleep, so lock step is made with --align-ms: each job's step
starts on a shared 200 ms grid, runs a 150 ms kernel and waits for it, then idles 50 ms."""
import os
import re
import unittest

from gshare_e2e import TestCase

MIB = 1 << 20
STEPS = 24
# One step: a 150 ms kernel, synchronized; the next step starts on the 200 ms grid.
STEP = ["--kernels", STEPS, "--kernel-ms", 150, "--sync-every", 1, "--align-ms", 200]
# The daemon's stretch line: the ms of the last gap idle together, the stretched gap, its shift.
STRETCH = re.compile(r"idle together \((\d+) ms of the last gap\): job \d+'s next gap "
                     r"stretched to (\d+) ms \(shift (\d+) ms\)")


class StaggerTest(TestCase):
    def harness(self, **config):
        cfg = {"sharing": "auto", "quantum": "20s"}
        cfg.update(config)
        h = super().harness(config=cfg, memory={"context_reserve": "1MiB"})
        h.no_stagger = config.get("stagger") is False
        h.env["FAKE_CUDA_DEVICE_FILE"] = os.path.join(h.tmp, "device")
        h.env["FAKE_CUDA_MEM_BYTES"] = str(256 * MIB)
        return h

    def watch(self, h, jobs):
        """Polls `gshare status --json` until every job ended; returns the GPU's largest
        gap_watch seen and its last stretches count."""
        seen = {"watch": 0, "stretches": 0}

        def check():
            for g in h.status()["gpus"]:
                seen["watch"] = max(seen["watch"], g.get("gap_watch", 0))
                seen["stretches"] = g.get("stretches", 0)
            return all(j.poll() is not None for j in jobs)
        h.wait_for(check, 90, "the jobs to end")
        return seen

    def run_pair(self, h, offset_ms=0):
        h.start_daemon()
        a = h.start_fake(STEP, name="a")
        b = h.start_fake(STEP + ["--align-offset-ms", offset_ms], name="b")
        seen = self.watch(h, (a, b))
        h.assert_done(a, STEPS, timeout=90)
        h.assert_done(b, STEPS, timeout=90)
        with open(h.daemon_log) as f:
            log = f.read()
        self.assertIn("shared mode", log, h.diagnostics())
        # Both report their gaps while they share the GPU; the status counts the stretches.
        self.assertEqual(seen["watch"], 0 if h.no_stagger else 2, h.diagnostics())
        self.assertEqual(seen["stretches"], len(STRETCH.findall(log)), h.diagnostics())
        return a, b, log

    @staticmethod
    def off_grid(kernels):
        """(ms off the grid, ms since the previous kernel ended) of each kernel after the
        first three (the first waits for no grid, the next ones for the switch to shared
        mode) that did not start on its job's grid."""
        out = []
        for k, n in zip(kernels[2:], kernels[3:]):
            off = (n.start / 1e6 % 200 + 100) % 200 - 100
            if abs(off) > 5:
                out.append((off, (n.start - k.end) / 1e6))
        return out

    def test_jobs_in_lock_step_are_moved_apart(self):
        h = self.harness()
        a, b, log = self.run_pair(h)
        stretches = STRETCH.findall(log)
        self.assertNotEqual(stretches, [], "no stretch for jobs in lock step\n" + h.diagnostics())
        # The shift is (period + gap - 3 x offset) / 4 (src/policy/stagger.h): with the 200 ms
        # period, the 50 ms gap and the offset 50 ms less what the gaps had in common, that is
        # (100 + 3 x together) / 4, ~62 ms for gaps that fall together. A loaded machine moves
        # the offset (the stretch then is shorter) and the period and gap the daemon measured,
        # hence the margins.
        together, ms, shift = (int(x) for x in stretches[0])
        expected = (100 + 3 * together) / 4
        self.assertLessEqual(abs(shift - expected), 10, "%s\n%s" % (stretches, h.diagnostics()))
        # The stretched gap: the usual gap and the shift.
        self.assertLessEqual(abs(ms - shift - 50), 10, stretches)
        # A stretched job's next kernel waited `ms` after its previous one ended, off the
        # grid that every other step of it keeps.
        late = self.off_grid(h.ops("K", a.child_pid())) + self.off_grid(h.ops("K", b.child_pid()))
        stretched = [gap for off, gap in late if ms - 5 <= gap <= ms + 15]
        self.assertNotEqual(stretched, [], "off-grid kernels %s, stretch %d ms\n%s" % (
            late, ms, h.diagnostics()))

    def test_jobs_whose_gaps_fall_apart_are_left_alone(self):
        h = self.harness()
        a, b, log = self.run_pair(h, offset_ms=100)
        self.assertEqual(STRETCH.findall(log), [], h.diagnostics())

    def test_a_job_alone_reports_no_gaps(self):
        h = self.harness()
        h.start_daemon()
        a = h.start_fake(STEP, name="a")
        seen = self.watch(h, (a,))
        h.assert_done(a, STEPS, timeout=90)
        self.assertEqual(seen, {"watch": 0, "stretches": 0}, h.diagnostics())

    def test_off_leaves_lock_step_alone(self):
        h = self.harness(stagger=False)
        a, b, log = self.run_pair(h)
        self.assertEqual(STRETCH.findall(log), [], h.diagnostics())


if __name__ == "__main__":
    unittest.main()
