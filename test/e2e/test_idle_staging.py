"""Idle memory staging end to end on the fake driver (docs/memory.md, "Idle memory is staged";
issue 23 item 2). The fake's device memory is shared by every process (FAKE_CUDA_DEVICE_FILE),
and its op log ($FAKE_CUDA_LOG) names every copy each process made:
  - a job idle between its steps (a notebook between cells) has its memory staged: copied to
    host memory (the engine's cuMemcpyDtoHAsync_v2) while it stays resident; `gshare status`
    shows the job idle and its staged bytes;
  - a job that arrives needing the room evicts the idle job without a single new copy;
  - the idle job runs again after its memory went: bit-exact, including the data it wrote
    after an earlier staging (a stale copy would fail fake_app's check);
  - with idle_stage_after = 0 nothing is staged."""
import os
import time
import unittest

from gshare_e2e import FAKE_APP, TestCase, proc_cpu_seconds

MIB = 1 << 20
DEVICE = 256 * MIB  # the fake GPU
JOB = 150 * MIB     # each job's memory: two do not fit, one does (and holds half the GPU)


class IdleStagingTest(TestCase):
    def harness(self, stage_after="400ms"):
        h = super().harness(
            config={"quantum": "300ms", "idle_release": "200ms"},
            memory={"context_reserve": "1MiB", "idle_stage_after": stage_after})
        h.share_fake_device(DEVICE)
        return h

    def swap_job(self, h, name, cycles, gap_ms):
        argv = [FAKE_APP, "--kernels", "0", "--swap-check", str(JOB), "--cycles", str(cycles),
                "--gap-ms", str(gap_ms)]
        return h.start_run(argv, ["-J", name], name=name)

    def record(self, h, name):
        return h.job_record(lambda j: j.get("name") == name and "memory" in j) or {}

    def engine_copies_out(self, h, pid):
        """The swap engine's device-to-host copies of process `pid` so far (the job's own
        reads are cuMemcpyDtoH_v2, synchronous)."""
        if not os.path.exists(h.log):
            return 0
        with open(h.log) as f:
            return sum(1 for line in f
                       if line.split()[1:2] == [str(pid)] and "cuMemcpyDtoHAsync_v2" in line)

    def wait_staged(self, h, name, what):
        box = {}

        def staged():
            rec = self.record(h, name)
            box["rec"] = rec
            return rec.get("memory", {}).get("staged", 0) >= JOB // 2
        h.wait_for(staged, 30, what)
        return box["rec"]

    def test_idle_job_is_staged_and_gives_its_room_without_a_copy(self):
        h = self.harness()
        h.start_daemon()
        # Four steps 3 s apart: idle (and staged) after the first and the second.
        a = self.swap_job(h, "nb", cycles=4, gap_ms=3000)
        pid = a.child_pid()
        rec = self.wait_staged(h, "nb", "the idle job's memory to be staged")
        self.assertGreater(rec["memory"]["resident"], 0, rec)  # staged, still on the GPU
        self.assertEqual(rec["lease"], "idle", rec)
        self.assertIsNotNone(rec["idle_seconds"], rec)
        # The text view of the same state. The job's next step may begin between two status
        # calls (steps are 3 s apart, and CI runs two tests at once), so the pair is read
        # again until both were taken inside one idle period: JSON staged, text, JSON staged.
        box = {}

        def idle_staged(r):
            return r.get("lease") == "idle" and r.get("memory", {}).get("staged", 0) > 0

        def text_shows_idle():
            before = self.record(h, "nb")
            box["out"] = h.gshare("status").stdout
            after = self.record(h, "nb")
            # One idle period: idle and staged at both ends, and its idle time only grew.
            return (idle_staged(before) and idle_staged(after)
                    and after["idle_seconds"] >= before["idle_seconds"])
        h.wait_for(text_shows_idle, 30, "a status text taken while the job was idle")
        out = box["out"]
        row = [line for line in out.splitlines() if " nb " in line]
        self.assertTrue(row and "idle " in row[0], out)  # "idle 1s"
        self.assertIn("STAGED", out)
        # It runs its next step: the copies are dropped (its data changes), then it idles and
        # is staged again; the arrival below must find the newer copies.
        h.wait_for(lambda: self.record(h, "nb").get("memory", {}).get("staged", 1) == 0, 30,
                   "the staged copies to be dropped when the job runs again")
        self.wait_staged(h, "nb", "the job to be staged again after its second step")
        copies = self.engine_copies_out(h, pid)
        self.assertGreater(copies, 0, "staging made no copy")
        # A job that needs the room arrives while the first is idle.
        b = self.swap_job(h, "train", cycles=3, gap_ms=0)

        def evicted():
            mem = self.record(h, "nb").get("memory", {})
            return mem.get("swapped", 0) > 0
        h.wait_for(evicted, 30, "the idle job's memory to leave the GPU")
        self.assertEqual(self.engine_copies_out(h, pid), copies,
                         "the eviction of staged memory copied it again")
        for job, cycles in ((b, 3), (a, 4)):
            rc = job.wait(90)
            self.assertEqual(rc, 0, "%s exited %s\n%s\n%s" % (job.name, rc, job.stderr,
                                                              h.diagnostics()))
            self.assertIn("fake_app: swap-check ok cycles=%d" % cycles, job.stdout)
        with open(h.daemon_log) as f:
            self.assertIn("staging", f.read())
        # Its staging deadlines passed: the daemon waits for events again, it does not spin.
        self.assertLess(self.cpu_seconds_over(h.daemon_pid(), 2.0), 0.5)

    @staticmethod
    def cpu_seconds_over(pid, seconds):
        before = proc_cpu_seconds(pid)
        time.sleep(seconds)
        return proc_cpu_seconds(pid) - before

    def test_no_staging_when_turned_off(self):
        h = self.harness(stage_after="0")
        h.start_daemon()
        a = self.swap_job(h, "nb", cycles=2, gap_ms=2500)
        pid = a.child_pid()
        seen = []

        def idle_a_while():
            rec = self.record(h, "nb")
            seen.append(rec.get("memory", {}).get("staged", 0))
            return (rec.get("idle_seconds") or 0) >= 1.5
        h.wait_for(idle_a_while, 30, "the job to be idle for 1.5 s")
        self.assertEqual(max(seen), 0)
        self.assertEqual(a.wait(60), 0, a.stderr)
        self.assertEqual(self.engine_copies_out(h, pid), 0)


if __name__ == "__main__":
    unittest.main()
