"""`gshare run` exits like its command: the command's status, its death signal re-raised,
127 not found, 126 not executable, 125 for gshare's own usage errors; signals sent to
`gshare run` reach the job."""
import os
import signal
import unittest

from gshare_e2e import TestCase


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


if __name__ == "__main__":
    unittest.main()
