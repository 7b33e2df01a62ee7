"""Issue 24, item 2 (history and accounting): `gshare acct` lists every run of the jobs of a
time window as sacct does (a requeued job's earlier runs too), with their times, GPU time,
peak memory, swaps and ExitCode; --state, --since/--until, --format, -P, --json; a bad field
is one error line, exit 2; `gshare status ID` is a readable block with the output expanded."""
import json
import os
import re
import pwd
import time
import unittest

from gshare_e2e import FAKE_APP, TestCase, _read

QUEUE = {"max_running": 4, "gpus": 1}


class AcctTest(TestCase):
    def setUp(self):
        self.h = self.harness(queue=QUEUE)
        self.work = os.path.join(self.h.tmp, "work")
        os.mkdir(self.work)

    def path(self, name):
        return os.path.join(self.work, name)

    def acct(self, *args, rc=0):
        r = self.h.gshare("acct", *args)
        self.assertEqual((r.returncode, r.stderr), (rc, ""), "acct %s" % (args,))
        return r.stdout

    def rows(self, *args):
        """`acct -P -n ARGS` as lists of fields."""
        return [line.split("|") for line in self.acct("-P", "-n", *args).splitlines()]

    def test_history_of_runs_filters_formats_and_status(self):
        h = self.h
        # A job on the fake GPU (lease time, peak memory), a failed one, one requeued while it
        # ran (its second run completes), and the failed one requeued after it ended.
        gpu = h.submit("-J", "ok", "-o", self.path("%x-%j.log"), "--", FAKE_APP, "--kernels", "4",
                       "--kernel-ms", "50", "--vmm", str(64 << 20))
        bad = h.submit("-J", "bad", "--", "sh", "-c", "exit 3")
        script = ("echo $GSHARE_JOB_ID >> %s; [ -e %s ] && exit 0; sleep 60"
                  % (self.path("runs"), self.path("second")))
        rq = h.submit("-J", "rq", "--", "sh", "-c", script)
        h.wait_state(gpu, "COMPLETED", 30)
        h.wait_state(bad, "FAILED", 30)
        h.wait_for(lambda: os.path.exists(self.path("runs")), 30, "the job to start")
        time.sleep(0.3)  # past its test of "second": it sleeps
        open(self.path("second"), "w").close()
        for job in (rq, bad):
            r = h.gshare("requeue", str(job))
            self.assertEqual((r.returncode, r.stderr), (0, ""))
        h.wait_for(lambda: _read(self.path("runs")).count("\n") == 2, 30, "the second run")
        h.wait_state(rq, "COMPLETED", 30)
        h.wait_for(lambda: self.rows("-j", str(bad), "-o", "State,Restarts") ==
                   [["FAILED", "0"], ["FAILED", "1"]], 30, "bad's second run")

        fields = "JobID,JobName,State,ExitCode,Restarts"
        self.assertEqual(self.rows("-o", fields), [
            [str(gpu), "ok", "COMPLETED", "0:0", "0"],
            [str(bad), "bad", "FAILED", "3:0", "0"],
            [str(bad), "bad", "FAILED", "3:0", "1"],
            [str(rq), "rq", "REQUEUED", "0:15", "0"],
            [str(rq), "rq", "COMPLETED", "0:0", "1"]])

        # --state: names or codes, REQUEUED (RQ) for the runs a requeue ended.
        self.assertEqual([r[0] for r in self.rows("-o", fields, "-s", "f")], [str(bad)] * 2)
        self.assertEqual(self.rows("-o", fields, "--state", "RQ,CA"),
                         [[str(rq), "rq", "REQUEUED", "0:15", "0"]])
        self.assertEqual(self.rows("-o", fields, "-s", "TO"), [])

        # --json: each run with its times and usage; GPU time and peak memory were recorded.
        doc = json.loads(self.acct("--json"))
        self.assertEqual(doc["schema_version"], 1)
        runs = doc["jobs"]
        self.assertEqual([(j["job_id"], j["restarts"]) for j in runs],
                         [(gpu, 0), (bad, 0), (bad, 1), (rq, 0), (rq, 1)])
        ok = runs[0]
        self.assertEqual((ok["name"], ok["state"], ok["exit"], ok["exit_code"]),
                         ("ok", "COMPLETED", "0:0", 0))
        self.assertGreater(ok["gpu_seconds"], 0.1)
        self.assertGreaterEqual(ok["peak_bytes"], 64 << 20)
        self.assertEqual((ok["swaps_out"], ok["swaps_in"]), (0, 0))
        self.assertAlmostEqual(ok["elapsed_seconds"], ok["end_time"] - ok["start_time"], 3)
        self.assertAlmostEqual(ok["reserved_seconds"], ok["start_time"] - ok["submit_time"], 3)
        self.assertEqual(ok["user"], pwd.getpwuid(os.getuid()).pw_name)
        # A later run was submitted when the run before it was requeued.
        self.assertGreaterEqual(runs[4]["submit_time"], runs[3]["end_time"] - 0.5)
        self.assertGreater(runs[4]["start_time"], runs[3]["end_time"])
        self.assertEqual(runs[3]["state"], "REQUEUED")

        # --since/--until: a run ended before --since, or submitted after --until, is out.
        after_ok = "@%.3f" % (ok["end_time"] + 0.001)
        self.assertNotIn(str(gpu), [r[0] for r in self.rows("-o", "JobID", "-S", after_ok)])
        self.assertEqual([r[0] for r in self.rows("-o", "JobID", "-S", "now-1hour",
                                                   "-E", "@%.3f" % (ok["submit_time"] + 0.001))],
                         [str(gpu)])
        self.assertEqual(self.rows("-o", "JobID", "-E", "2000-01-01"), [])
        self.assertEqual(len(self.rows("--since", "2000-01-01T00:00", "--until", "now")), 5)
        r = h.gshare("acct", "-S", "last tuesday")
        h.assert_error_line(r, 2, "bad time")

        # The table: sacct's heading and dashes; -P: '|' between fields, one heading line.
        table = self.acct("-o", "JobID,JobName%4,Elapsed,PeakMem,Swaps").splitlines()
        # A heading longer than its width is cut as a cell is, as sacct does.
        self.assertEqual(table[0].split(), ["JobID", "Job+", "Elapsed", "PeakMem", "Swaps"])
        self.assertRegex(table[1], r"^-{8} -{4} -{10} -{9} -{9}$")
        self.assertRegex(table[2], r"^%d +ok +\d\d:\d\d:\d\d +\d+(\.\d\d)?[MG] +0/0$" % gpu)
        self.assertIn("bad ", table[3])
        self.assertEqual(self.acct("-P", "-o", "jobid,STATE", "-j", str(gpu)),
                         "JobID|State\n%d|COMPLETED\n" % gpu)
        # -l: every field, as `acct --help` lists them.
        help_text = h.gshare("acct", "--help").stdout
        known = re.search(r"for a width: ([\w,]+)", help_text).group(1).split(",")
        self.assertEqual(self.acct("-l", "-P", "-j", str(gpu)).splitlines()[0].split("|"), known)
        h.assert_error_line(h.gshare("acct", "-l", "-o", "JobID"), 2)
        self.assertEqual(self.acct("-p", "-n", "-o", "JobID", "-j", str(gpu)), "%d|\n" % gpu)

        # An unknown field: one line naming it, exit 2, nothing on stdout.
        h.assert_error_line(h.gshare("acct", "--format=JobID,Bogus"), 2, "Bogus")

        # status ID: a readable block, the output pattern expanded, the command quoted.
        r = h.gshare("status", str(rq))
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        text = r.stdout
        self.assertIn("JobId=%d JobName=rq\n" % rq, text)
        self.assertIn("JobState=COMPLETED Reason=None ExitCode=0:0 Restarts=1", text)
        self.assertIn("Command=sh -c '%s'" % script, text)
        self.assertRegex(text, r"SubmitTime=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d ")
        self.assertNotRegex(text, r"=1[0-9]{9}\.")  # no epoch floats
        ok_status = h.gshare("status", str(gpu)).stdout
        self.assertIn("StdOut=%s\n" % self.path("ok-%d.log" % gpu), ok_status)
        self.assertNotIn("%", ok_status)
        self.assertRegex(ok_status, r"PeakMem=\d+(\.\d)?MiB")
        self.assertRegex(ok_status, r"GPUTime=\d")
        # --json stays the record as it was.
        one = json.loads(h.gshare("status", str(gpu), "--json").stdout)
        self.assertEqual((one["id"], one["output"]), (gpu, self.path("%x-%j.log")))


if __name__ == "__main__":
    unittest.main()
