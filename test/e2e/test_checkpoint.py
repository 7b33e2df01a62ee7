"""The checkpoint engine and `gshare suspend`/`resume` end to end on the fake driver. The fake's
processes carry out each other's cuCheckpointProcess* calls (FAKE_CUDA_CHECKPOINT_DIR: the
daemon's helper locks, checkpoints, restores and unlocks a job's process), and their device
memory is one shared count (FAKE_CUDA_DEVICE_FILE), so a process that is not checkpointed
really leaves the next job without room, and one restored without room is lost for good:
  - two jobs under --memory checkpoint whose memory adds up to more than the GPU both finish
    bit-exact, taking turns: each is checkpointed whole to make room for the other and
    restored before its next kernel;
  - `gshare suspend` takes a job's lease, checkpoints it (its device bytes leave the count)
    and stops it; a job that needs the whole GPU runs meanwhile; `gshare resume` continues it,
    it is restored and finishes bit-exact;
  - a job whose Python interpreter is shutting down (fake_app --finalizing) gives the GPU back
    as exiting and is not checkpointed; the waiting job's restore waits for its memory to go;
  - suspend/resume of jobs in the wrong state fail with one clear line."""
import re
import unittest

from gshare_e2e import FAKE_APP, FAKECUDA_DIR, FAKENVML_DIR, TestCase, overlaps, proc_state

MIB = 1 << 20
DEVICE = 256 * MIB
JOB = 150 * MIB


class CheckpointTest(TestCase):
    def harness(self, sharing="auto", quantum="300ms"):
        h = super().harness(config={"sharing": sharing, "quantum": quantum},
                            memory={"context_reserve": "1MiB"})
        h.share_fake_device(DEVICE)
        # NVML as on a real machine: the checkpoint helper measures what each checkpoint frees
        # and waits for that much room before a restore (docs/memory.md, "How `checkpoint`
        # works").
        h.env["LD_LIBRARY_PATH"] = FAKECUDA_DIR + ":" + FAKENVML_DIR
        h.env["FAKE_CUDA_CHECKPOINT_DIR"] = h.tmp
        h.env["FAKE_CUDA_CHECKPOINT_US_PER_MIB"] = "1000"  # 150 MiB: 0.15 s each way
        return h

    def job(self, h, name, nbytes=JOB, cycles=12, gap_ms=0, engine="checkpoint", extra=()):
        args = ["--kernels", 0, "--swap-check", nbytes, "--cycles", cycles, "--gap-ms", gap_ms]
        args += list(extra)
        return h.start_run([FAKE_APP] + [str(a) for a in args], ["-J", name, "--memory", engine],
                           name=name)

    def assert_exact(self, h, job, cycles, timeout=120):
        rc = job.wait(timeout)
        self.assertEqual(rc, 0, "%s exited %s\nstdout: %s\nstderr: %s\n%s" % (
            job.name, rc, job.stdout, job.stderr, h.diagnostics()))
        self.assertIn("fake_app: swap-check ok cycles=%d" % cycles, job.stdout)

    def device_used(self, h):
        with open(h.env["FAKE_CUDA_DEVICE_FILE"], "rb") as f:
            return int.from_bytes(f.read(8), "little")

    def daemon_log(self, h):
        with open(h.daemon_log) as f:
            return f.read()

    def record(self, h, name):
        return h.job_record(lambda j: j.get("name") == name) or {}

    def test_oversubscribed_pair_takes_turns_through_checkpoints(self):
        h = self.harness()
        h.start_daemon()
        a = self.job(h, "a", cycles=15, gap_ms=30)
        b = self.job(h, "b", cycles=15, gap_ms=30)
        seen = {}

        def done():
            for name in ("a", "b"):
                mem = self.record(h, name).get("memory") or {}
                if mem and mem.get("checkpoints", 0) >= seen.get(name, {}).get("checkpoints", 0):
                    seen[name] = mem
            return a.poll() is not None and b.poll() is not None
        h.wait_for(done, 180, "both jobs to end")
        self.assert_exact(h, a, 15)
        self.assert_exact(h, b, 15)
        log = self.daemon_log(h)
        self.assertIn("exclusive mode", log)
        # Each checkpoint's footprint, as NVML saw it freed: the job's whole buffer set (JOB)
        # while it takes turns; its restore waits for that much room.
        freed = [int(b) for b in re.findall(r"pid \d+ checkpointed in \d+ ms, (\d+) bytes freed", log)]
        self.assertTrue(freed, log)
        self.assertGreaterEqual(max(freed), JOB, log)
        self.assertRegex(log, r"pid \d+ restored in")
        # No restore failed (a lost process). A checkpoint may fail for a process that is
        # already exiting, at the very end, and then harms nothing.
        self.assertNotIn("restore of", log)
        self.assertNotIn("killing", log)
        for name in ("a", "b"):  # they took turns: each was checkpointed and restored
            self.assertEqual(seen[name].get("engine"), "checkpoint", seen)
            self.assertGreater(seen[name].get("checkpoints", 0), 0, seen)
            self.assertGreater(seen[name].get("restores", 0), 0, seen)
        # The helper went through the driver's whole state machine on the jobs' processes.
        calls = {o.name for o in h.ops("P")}
        self.assertEqual(calls, {"cuCheckpointProcessLock", "cuCheckpointProcessCheckpoint",
                                 "cuCheckpointProcessRestore", "cuCheckpointProcessUnlock"})
        ops = h.ops("K")
        self.assertEqual(overlaps([o for o in ops if o.pid == a.child_pid()],
                                  [o for o in ops if o.pid == b.child_pid()]), [])
        self.assertEqual(self.device_used(h), 0, "device bytes still charged after both jobs ended")

    def test_a_job_shutting_down_is_not_checkpointed(self):
        h = self.harness()
        h.start_daemon()
        a = self.job(h, "a", cycles=40, gap_ms=30)
        h.wait_kernels(a.child_pid(), 3)
        # b ends first and then stays 1.5 s in its "interpreter shutdown" with its memory,
        # as a PyTorch job's exit does; a waits for the GPU meanwhile, checkpointed.
        b = self.job(h, "b", cycles=6, gap_ms=30,
                     extra=("--leak-to-exit", "--finalizing", "--sleep-ms", 1500))
        b_pid = b.child_pid()
        self.assert_exact(h, b, 6)
        self.assert_exact(h, a, 40, timeout=180)
        log = self.daemon_log(h)
        exit_release = re.search(r"pid %d gives \S+ back while exiting" % b_pid, log)
        self.assertIsNotNone(exit_release, "b's release in its shutdown is not an exit:\n" + log)
        after = log[exit_release.start():]
        self.assertNotRegex(after, r"checkpointing pid %d " % b_pid)
        # Every checkpoint of b came back: none was taken in its shutdown.
        self.assertEqual(len(re.findall(r"checkpointing pid %d " % b_pid, log)),
                         len(re.findall(r"pid %d restored in" % b_pid, log)), log)
        self.assertRegex(after, r"pid %d restored in" % a.child_pid())
        self.assertNotIn("restore of", log)
        self.assertEqual(self.device_used(h), 0)

    def test_suspend_frees_the_gpu_and_resume_continues_exactly(self):
        h = self.harness()
        h.start_daemon()
        # 100 cycles: ~95 still to run when the suspend lands (each is a kernel, a check of the
        # job's 150 MiB and a sleep, 0.1 s or more), all of them checked after the restore.
        a = self.job(h, "a", cycles=100, gap_ms=10, engine="swap")
        pid = a.child_pid()
        h.wait_kernels(pid, 5)
        job_id = self.record(h, "a")["id"]
        r = h.gshare("suspend", str(job_id))
        self.assertEqual(r.returncode, 0, r.stderr)

        def suspended():
            rec = self.record(h, "a")
            return (rec.get("state") == "SUSPENDED" and (rec.get("memory") or {}).get("checkpointed")
                    and proc_state(pid) == "T" and self.device_used(h) == 0)
        h.wait_for(suspended, 30, "job a checkpointed and stopped, its device bytes gone")
        table = h.gshare("status").stdout
        line = next(l for l in table.splitlines() if l.split()[:1] == [str(job_id)])
        self.assertIn("SUSPENDED", line)
        self.assertIn(" 1/0 ", line, "SWAPS counts the checkpoint:\n" + table)
        n_kernels = len(h.ops("K", pid))
        # The whole GPU is free for another job meanwhile.
        b = self.job(h, "b", nbytes=200 * MIB, cycles=5, engine="swap")
        self.assert_exact(h, b, 5)
        self.assertEqual(len(h.ops("K", pid)), n_kernels, "a suspended job ran kernels")
        self.assertEqual(h.gshare("suspend", str(job_id)).returncode, 1)
        r = h.gshare("resume", str(job_id))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_exact(h, a, 100, timeout=180)
        log = self.daemon_log(h)
        self.assertIn("job %d suspended" % job_id, log)
        self.assertIn("job %d resumed" % job_id, log)
        self.assertRegex(log, r"pid %d restored in" % pid)
        self.assertEqual(self.device_used(h), 0)

    def test_wrong_states_are_refused(self):
        h = self.harness()
        h.start_daemon()
        h.assert_error_line(h.gshare("suspend", "999"), 1, "999")
        a = self.job(h, "a", cycles=200, gap_ms=10)
        h.wait_kernels(a.child_pid(), 2)
        job_id = self.record(h, "a")["id"]
        h.assert_error_line(h.gshare("resume", str(job_id)), 1, "not SUSPENDED")
        a.kill()


if __name__ == "__main__":
    unittest.main()
