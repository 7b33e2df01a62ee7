"""`gshare run` exits like its command: the command's status, its death signal re-raised,
127 not found, 126 not executable, 125 for gshare's own usage errors; signals sent to
`gshare run` reach the job, and a job its user interrupts (Ctrl-C) ends CANCELLED."""
import os
import pty
import select
import signal
import time
import unittest

from gshare_e2e import GSHARE, TestCase


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


class RunExitTest(TestCase):
    def setUp(self):
        self.h = self.harness()

    def test_exit_status(self):
        r = self.h.gshare("run", "--", "sh", "-c", "exit 3")
        self.assertEqual(r.returncode, 3, r.stderr)
        r = self.h.gshare("run", "--", "true")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_not_found(self):
        r = self.h.gshare("run", "--", "/nonexistent")
        self.assertEqual(r.returncode, 127, r.stderr)
        self.assertIn("/nonexistent", r.stderr)

    def test_not_executable(self):
        path = os.path.join(self.h.tmp, "not-exec.sh")
        with open(path, "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(path, 0o644)
        r = self.h.gshare("run", "--", path)
        self.assertEqual(r.returncode, 126, r.stderr)

    def test_job_killed_by_signal(self):
        r = self.h.gshare("run", "--", "sh", "-c", "kill -TERM $$")
        self.assertEqual(r.returncode, -signal.SIGTERM, "gshare must die of the job's signal")

    def test_bad_usage(self):
        r = self.h.gshare("run", "--quantum", "5x", "--", "true")
        self.assertEqual(r.returncode, 125)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn("quantum", lines[0])
        self.assertEqual(r.stdout, "")
        r = self.h.gshare("run", "--bogus-flag", "--", "true", config=False)
        self.assertEqual(r.returncode, 125, r.stderr)
        r = self.h.gshare("run", "-p", "5000", "--", "true")
        self.assertEqual(r.returncode, 125, r.stderr)

    # Regression: non-UTF-8 bytes and options before `run` (issue 2).
    def test_bad_usage_after_global_option(self):
        r = self.h.gshare("run", "--bogus-flag", "--", "true")  # gshare --config F run ...
        self.assertEqual(r.returncode, 125, r.stderr)

    # Regression: non-UTF-8 bytes and options before `run` (issue 2).
    def test_non_utf8_argument(self):
        latin1 = os.fsdecode(b"caf\xe9.txt")  # passed to the job as the raw bytes
        r = self.h.gshare("run", "--", "sh", "-c", "exit 3", latin1)
        self.assertEqual(r.returncode, 3, r.stderr)

    def test_sigterm_forwarded(self):
        h = self.h
        got, ready = os.path.join(h.tmp, "got"), os.path.join(h.tmp, "ready")
        script = 'trap "echo got >%s; exit 7" TERM; echo ready >%s; sleep 30 & wait' % (got, ready)
        job = h.start_run(["sh", "-c", script], name="trap")
        h.wait_for(lambda: read(ready).strip() == "ready", 30, "the job's trap to be set")
        os.kill(job.pid, signal.SIGTERM)
        self.assertEqual(job.wait(30), 7, job.stderr)
        self.assertEqual(read(got).strip(), "got")
        rec = h.job_record(lambda j: j["argv"] == ["sh", "-c", script])
        self.assertIsNotNone(rec)
        self.assertEqual((rec["state"], rec["exit_code"]), ("FAILED", 7))

    def test_ctrl_c_records_the_job_cancelled(self):
        """Ctrl-C of a foreground run ends its job CANCELLED, as Slurm records an interrupted
        srun and as a pending run already is: SIGINT sent to `gshare run` (forwarded to the
        job), and the terminal's own ^C, which reaches the job's process group directly."""
        h = self.h
        job = h.start_run(["sleep", "60"], ["-J", "interrupted"], name="interrupted")
        job.child_pid()
        os.kill(job.pid, signal.SIGINT)
        self.assertEqual(job.wait(30), -signal.SIGINT, job.stderr)

        # On a terminal: gshare run gives the job the terminal's foreground, so ^C goes there.
        pid, master = pty.fork()
        if pid == 0:
            try:
                os.execve(GSHARE, h.gshare_argv("run", "-J", "on-a-tty", "--", "sh", "-c",
                                                "echo ready; exec sleep 60"), h.env)
            finally:
                os._exit(127)
        self.addCleanup(os.close, master)
        out = b""
        deadline = time.monotonic() + 30
        while b"ready" not in out and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                out += os.read(master, 1024)
        self.assertIn(b"ready", out)
        os.write(master, b"\x03")
        _, status = os.waitpid(pid, 0)
        self.assertTrue(os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGINT, status)

        jobs = {j["name"]: j for j in h.queue_jobs().values()}
        for name in ("interrupted", "on-a-tty"):
            self.assertEqual((jobs[name]["state"], jobs[name]["signal"]),
                             ("CANCELLED", signal.SIGINT), jobs[name])
        # A job that exits by itself after SIGTERM is still its own status (FAILED 7 above);
        # one that finishes its work after ^C is COMPLETED.
        got, ready = os.path.join(h.tmp, "got-int"), os.path.join(h.tmp, "ready-int")
        script = 'trap "echo got >%s; exit 0" INT; echo ready >%s; sleep 30 & wait' % (got, ready)
        job = h.start_run(["sh", "-c", script], ["-J", "finishes"], name="finishes")
        h.wait_for(lambda: read(ready).strip() == "ready", 30, "the job's trap to be set")
        os.kill(job.pid, signal.SIGINT)
        self.assertEqual(job.wait(30), 0, job.stderr)
        rec = [j for j in h.queue_jobs().values() if j["name"] == "finishes"][0]
        self.assertEqual(rec["state"], "COMPLETED", rec)


if __name__ == "__main__":
    unittest.main()
