"""sbatch's options for a job's files and its warning before the time limit, as a Slurm user
types them on `gshare submit` and in #GSHARE lines: -e/--error (stderr's own file, with -o's
patterns), --open-mode=append|truncate, and --signal=[B:]SIG[@SECONDS]; bad values are one line
and exit 2, and nothing is queued."""
import os
import unittest

from gshare_e2e import TestCase, _read


class SbatchOutputSignalTest(TestCase):
    def setUp(self):
        self.h = self.harness(queue={"max_running": 2, "gpus": 1})
        self.h.start_daemon()

    def path(self, name):
        return os.path.join(self.h.tmp, name)

    def wait_rc(self, jid, timeout=60):
        return self.h.gshare("wait", str(jid), timeout=timeout).returncode

    def test_error_file_and_open_mode(self):
        h = self.h
        script = "echo out $GSHARE_JOB_ID; echo err $GSHARE_JOB_ID >&2"
        a = h.submit("-J", "files", "-o", self.path("%x.out"), "-e", self.path("%x-%j.err"),
                     "--", "sh", "-c", script)
        self.assertEqual(self.wait_rc(a), 0)
        self.assertEqual(_read(self.path("files.out")), "out %d\n" % a)
        self.assertEqual(_read(self.path("files-%d.err" % a)), "err %d\n" % a)
        shown = h.gshare("status", str(a)).stdout
        self.assertIn("StdErr=%s" % self.path("files-%d.err" % a), shown)
        # Appended to, from a batch script's #GSHARE lines; a relative -e is the job's
        # directory's.
        with open(self.path("job.sh"), "w") as f:
            f.write("#!/bin/sh\n#GSHARE -o %s\n#GSHARE -e log.err\n#GSHARE --open-mode=append\n"
                    "%s\n" % (self.path("log.out"), script))
        ids = [h.submit(self.path("job.sh"), cwd=h.tmp) for _ in range(2)]
        for i in ids:
            self.assertEqual(self.wait_rc(i), 0)
        self.assertEqual(sorted(_read(self.path("log.out")).splitlines()),
                         sorted("out %d" % i for i in ids))
        self.assertEqual(sorted(_read(self.path("log.err")).splitlines()),
                         sorted("err %d" % i for i in ids))
        self.assertIn("OpenMode=append", h.gshare("status", str(ids[0])).stdout)
        # Truncated (the default) when not.
        b = h.submit("-o", self.path("log.out"), "--", "echo", "alone")
        self.assertEqual(self.wait_rc(b), 0)
        self.assertEqual(_read(self.path("log.out")), "alone\n")

    def test_signal_before_the_time_limit(self):
        h = self.h
        out = self.path("warned.out")
        # USR1 arrives 3 s before a 5 s limit: the job saves and ends well before it.
        script = ("trap 'echo saved; exit 0' USR1; echo started; "
                  "while :; do sleep 0.1; done")
        a = h.submit("-t", "0:05", "--signal", "USR1@3", "-o", out, "--", "sh", "-c", script)
        self.assertEqual(self.wait_rc(a), 0)
        text = _read(out)  # the shell may say that its sleep died of the signal too
        self.assertTrue(text.startswith("started\n") and text.endswith("saved\n"), text)
        rec = h.queue_jobs()[a]
        self.assertEqual((rec["state"], rec["warn_signal"], rec["warn_ms"]), ("COMPLETED", 10, 3000))
        self.assertLess(rec["end_time"] - rec["start_time"], 4.5)
        self.assertIn("Signal=USR1@3", h.gshare("status", str(a)).stdout)

    def test_bad_values_are_one_line_and_queue_nothing(self):
        h = self.h
        # Usage errors exit 2; a file that cannot be made exits 1, as -o's (docs/cli.md).
        for args, word, rc in ((["--signal", "USR1@9"], "no --time limit", 2),
                               (["-t", "1:00", "--signal", "NOPE"], "not a signal", 2),
                               (["-t", "1:00", "--signal", "R:USR1"], "unknown flag", 2),
                               (["--open-mode", "rewrite"], "expected append or truncate", 2),
                               (["-e", "/no/such/dir/x.err"], "--error /no/such/dir/x.err", 1)):
            r = h.gshare("submit", *args, "--", "true")
            self.assertEqual(r.returncode, rc, (args, r.stderr))
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn(word, r.stderr)
        self.assertEqual(h.queue_jobs(), {})


if __name__ == "__main__":
    unittest.main()
