"""Issue 24 item 7: steering jobs after submission, on the fake driver:
  - `gshare update ID` changes a pending job's name, time limit, dependencies, start time and
    priority (seen in `queue --json`); `-d none` clears the dependencies; a dependency that
    would make jobs wait for each other, on no job, or an update of a running job is refused
    with one line (exit 1) and changes nothing; no field or a bad value is a usage error (2);
  - hold and release take cancel's filters: `hold -n NAME` holds every pending job of that
    name and no other, `release -u USER` releases them; `hold -t R` is a usage error;
  - `gshare queue pause` starts no submitted job (reason QueuePaused; `status --json` says
    paused) while a foreground `gshare run` still runs; the pause outlives a daemon restart;
    `gshare queue resume` starts the job;
  - a foreground `gshare run` whose job waits more than 5 s for the GPU says so once on stderr
    (another job holds it in exclusive mode); with `-q` it says nothing;
  - `queue` shows such a running job with REASON Lease (the table, --format reason, --json
    "reason" and "lease") while the holder's REASON stays empty;
  - a config file changed after the daemon started: `queue`, `status` and `submit` print one
    line on stderr naming it and how to restart, stdout unchanged, exit 0 (`status --json`
    marks it changed); none after a restart."""
import getpass
import time
import unittest

from gshare_e2e import FAKE_APP, TestCase


class SteerTest(TestCase):
    def test_update_a_pending_job(self):
        h = self.harness()
        h.start_daemon()
        a = h.submit("-H", "-J", "first", "-t", "1:00:00", "--", "true")
        b = h.submit("-H", "-J", "second", "--", "true")
        r = h.gshare("update", str(b), "-J", "renamed", "-t", "2:00:00", "-d", "afterok:%d" % a,
                     "--begin", "now+1h", "-p", "7")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        rec = h.queue_jobs()[b]
        self.assertEqual(rec["name"], "renamed")
        self.assertEqual(rec["time_limit_ms"], 2 * 3600 * 1000)
        self.assertEqual(rec["dependency"], "afterok:%d" % a)
        self.assertAlmostEqual(rec["begin_time"], time.time() + 3600, delta=60)
        self.assertEqual(rec["priority"], 7)
        self.assertEqual(rec["state"], "PENDING")

        # A cycle, a job that does not exist: refused, nothing changed.
        r = h.gshare("update", str(a), "-d", "afterok:%d" % b)
        h.assert_error_line(r, 1, "wait for itself")
        # A singleton entry first names no job: the message names the one in the cycle.
        r = h.gshare("update", str(a), "-d", "singleton,afterok:%d" % b)
        h.assert_error_line(r, 1, "on job %d would wait for itself" % b)
        r = h.gshare("update", str(a), "-d", "afterany:9999")
        h.assert_error_line(r, 1, "9999")
        self.assertEqual(h.queue_jobs()[a]["dependency"], "")

        # Cleared, and the start time too: b runs once a is released and completes.
        r = h.gshare("update", str(b), "-d", "none", "--begin", "now")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual(h.queue_jobs()[b]["dependency"], "")
        self.assertEqual(h.gshare("release", str(b)).returncode, 0)
        h.wait_state(b, "COMPLETED")

        # Not pending any more; nothing to change; bad values.
        r = h.gshare("update", str(b), "-J", "late")
        h.assert_error_line(r, 1, "not pending")
        for args in ([], ["-t", "soon"], ["-d", "after:x"], ["--begin", "someday"], ["-J", ""],
                     ["-p", "5000"]):
            r = h.gshare("update", str(a), *args)
            h.assert_error_line(r, 2)
        self.assertEqual(h.queue_jobs()[a]["name"], "first")

    def test_hold_and_release_take_filters(self):
        h = self.harness()
        h.start_daemon()
        me = getpass.getuser()
        sweep = [h.submit("-J", "sweep", "--begin", "now+1h", "--", "true") for _ in range(3)]
        other = h.submit("-J", "other", "--begin", "now+1h", "--", "true")
        r = h.gshare("hold", "-n", "sweep")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        jobs = h.queue_jobs()
        self.assertEqual([jobs[i]["held"] for i in sweep], [True] * 3)
        self.assertFalse(jobs[other]["held"])
        r = h.gshare("release", "-u", me, "-t", "PD")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        jobs = h.queue_jobs()
        self.assertEqual([jobs[i]["held"] for i in sweep + [other]], [False] * 4)
        r = h.gshare("hold", "-t", "R")
        h.assert_error_line(r, 2, "hold")
        r = h.gshare("hold")
        h.assert_error_line(r, 2, "name the jobs")

    def test_queue_pause_and_resume(self):
        h = self.harness()
        h.start_daemon()
        r = h.gshare("queue", "pause")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("queue paused", r.stderr)
        # `submit` says on stderr that the job will not start yet (one line).
        banner = "the queue is paused: no submitted job starts until `gshare queue resume`"
        r = h.gshare("submit", "-J", "nightly", "--", "true")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "gshare: " + banner + "\n")
        job = int(r.stdout)
        rec = h.wait_for(lambda: (lambda j: j if j["reason"] == "QueuePaused" else None)(
            h.queue_jobs()[job]), 10, "job %d pending with reason QueuePaused" % job)
        self.assertEqual(rec["state"], "PENDING")
        self.assertEqual(h.status()["daemon"]["queue"], "paused")
        # So do `queue` and `status`; a resumed queue says nothing.
        for args in (["queue"], ["status"]):
            r = h.gshare(*args)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(sum(banner in line for line in r.stderr.splitlines()), 1, r.stderr)
        fg = h.gshare("run", "--", "true")
        self.assertEqual(fg.returncode, 0, fg.stderr)
        # Still paused after a restart.
        self.assertEqual(h.gshare("daemon", "stop").returncode, 0)
        h.start_daemon()
        self.assertEqual(h.status()["daemon"]["queue"], "paused")
        # The daemon runs an admission pass at the end of every turn of its loop, and it
        # answers the next request in a later turn: this answer comes after a pass that
        # would have started the job.
        self.assertEqual(h.queue_jobs()[job]["state"], "PENDING")
        r = h.gshare("queue", "resume")
        self.assertEqual(r.returncode, 0, r.stderr)
        h.wait_state(job, "COMPLETED")
        self.assertEqual(h.status()["daemon"]["queue"], "running")
        self.assertNotIn("paused", h.gshare("queue").stderr + h.gshare("status").stderr)

    def test_parallel_changes_jobs_per_slot_at_run_time_and_keeps_it(self):
        # [queue] max_running 1 on one GPU slot: one sleeper at a time, until `gshare parallel
        # 3` lets three run; the number survives a restart; --reset gives back the config's.
        h = self.harness(queue={"max_running": 1, "gpus": 1})
        h.start_daemon()
        r = h.gshare("parallel")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "1 job(s) at once per GPU slot ([queue] max_running)\n")
        jobs = [h.submit("-J", "s%d" % i, "--", "sleep", "30") for i in range(4)]
        h.wait_state(jobs[0], "RUNNING")
        running = lambda: sorted(j for j in jobs if h.queue_jobs()[j]["state"] == "RUNNING")
        self.assertEqual(running(), jobs[:1])
        r = h.gshare("parallel", "3")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("3 job(s) at once per GPU slot (gshare parallel", r.stderr)
        h.wait_for(lambda: running() == jobs[:3], 20, "three jobs running")
        self.assertEqual(h.queue_jobs()[jobs[3]]["state"], "PENDING")
        self.assertEqual(h.status()["daemon"]["max_running"], 3)
        self.assertEqual(h.gshare("daemon", "stop").returncode, 0)
        h.start_daemon()
        self.assertEqual(h.status()["daemon"]["max_running_from"], "parallel")
        r = h.gshare("parallel", "--reset")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("1 job(s) at once per GPU slot ([queue] max_running)", r.stderr)
        self.assertEqual(h.status()["daemon"]["max_running"], 1)
        for bad in (["parallel", "0"], ["parallel", "x"], ["parallel", "2", "--reset"]):
            r = h.gshare(*bad)
            self.assertNotEqual(r.returncode, 0, bad)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertEqual(h.gshare("cancel", *map(str, jobs)).returncode, 0)

    def test_a_run_that_waits_for_the_gpu_says_so_once(self):
        h = self.harness(config={"quantum": "60s"})
        h.start_daemon()
        holder = h.start_fake(["--kernels", "240", "--kernel-ms", "50"], name="holder")
        h.wait_kernels(holder.child_pid(), 1)
        said = h.start_run([FAKE_APP, "--kernels", "1"], ["-J", "said"], name="said")
        quiet = h.start_run([FAKE_APP, "--kernels", "1"], ["-q", "-J", "quiet"], name="quiet")
        for job in (said, quiet, holder):
            self.assertEqual(job.wait(60), 0, job.stderr + h.diagnostics())
        notice = "waits for its turn on the GPU"
        self.assertEqual(said.stderr.count(notice), 1, said.stderr)
        self.assertNotIn(notice, quiet.stderr)
        self.assertEqual(quiet.stderr, "")

    def test_queue_reason_shows_the_lease_wait(self):
        h = self.harness(config={"sharing": "exclusive", "quantum": "60s"})
        h.start_daemon()
        holder = h.start_fake(["--kernels", "240", "--kernel-ms", "50"], ["-J", "holder"],
                              name="holder")
        h.wait_kernels(holder.child_pid(), 1)
        waiter = h.start_fake(["--kernels", "1"], ["-J", "waiter"], name="waiter")

        def rows():
            return {j["name"]: j for j in h.queue_jobs().values()}
        rec = h.wait_for(lambda: (lambda j: j if j and j["reason"] == "Lease" else None)(
            rows().get("waiter")), 30, "the waiter's queue row with REASON Lease")
        self.assertEqual((rec["state"], rec["lease"]), ("RUNNING", "waiting"))
        self.assertEqual((rows()["holder"]["reason"], rows()["holder"]["lease"]), ("", "holding"))
        table = h.gshare("queue")
        self.assertEqual((table.returncode, table.stderr), (0, ""))
        line = next(l for l in table.stdout.splitlines() if "waiter" in l)
        self.assertTrue(line.endswith(" Lease"), table.stdout)
        line = next(l for l in table.stdout.splitlines() if "holder" in l)
        self.assertFalse(line.rstrip().endswith("Lease"), table.stdout)
        r = h.gshare("queue", "--no-header", "--format", "name,reason")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(["waiter", "Lease"], [l.split() for l in r.stdout.splitlines()])
        for job in (holder, waiter):
            self.assertEqual(job.wait(60), 0, job.stderr + h.diagnostics())
        # Ended: the stored reason, no lease.
        self.assertEqual((rows()["waiter"]["reason"], rows()["waiter"]["lease"]), ("", None))

    def test_a_changed_config_is_named_once(self):
        h = self.harness()
        h.start_daemon()
        h.submit("-H", "-J", "kept", "--", "true")
        before = h.gshare("queue")
        self.assertEqual((before.returncode, before.stderr), (0, ""))
        files = h.status()["daemon"]["config_files"]
        self.assertIn({"path": h.config_path, "loaded": True, "changed": False}, files)
        with open(h.config_path) as f:
            text = f.read()
        with open(h.config_path, "w") as f:
            f.write(text.replace('drop_grace = "10s"', 'drop_grace = "5s"'))
        line = ("gshare: the config changed since the daemon started (%s); restart it to apply: "
                "gshare daemon stop && gshare daemon start\n" % h.config_path)
        r = h.gshare("queue")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, before.stdout, line))
        r = h.gshare("status")
        self.assertEqual((r.returncode, r.stderr), (0, line))
        r = h.gshare("submit", "-H", "--", "true")
        self.assertEqual((r.returncode, r.stderr), (0, line))
        self.assertRegex(r.stdout, r"\A[0-9]+\n\Z")
        files = h.status()["daemon"]["config_files"]
        self.assertIn({"path": h.config_path, "loaded": True, "changed": True}, files)
        self.assertEqual(h.gshare("daemon", "stop").returncode, 0)
        h.start_daemon()
        r = h.gshare("queue")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual(h.status()["daemon"]["drop_grace_ms"], 5000)


if __name__ == "__main__":
    unittest.main()
