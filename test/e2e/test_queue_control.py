"""Job control of the batch queue as docs/cli.md documents it: cancel (pending and running, the
SIGTERM/SIGKILL grace, filters, -s), hold/release, set-priority, requeue, time limits,
--begin, dependencies, logs -f, wait and clean. The job options of `submit` and `run` are
test_job_options.py's."""
import datetime
import json
import os
import pwd
import signal
import subprocess
import time
import unittest

from gshare_e2e import _read, proc_alive
from queue_case import QueueCase


class QueueControlTest(QueueCase):
    # ---- cancel ---------------------------------------------------------------------------
    def test_cancel_pending_is_immediate(self):
        h = self.h
        _, go = self.blocker()
        p = h.submit("--", "true")
        self.assertEqual(h.wait_state(p, "PENDING")["reason"], "Resources")
        r = h.gshare("cancel", str(p))
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "", ""))
        rec = self.state(p)  # at once: no polling
        self.assertEqual((rec["state"], rec["state_code"], rec["start_time"]), ("CANCELLED", "CA", None))
        self.assertEqual(self.wait_rc(p), 143, "a job cancelled before it ran: 128+SIGTERM")
        go()

    def test_cancel_running_term_then_kill(self):
        h = self.h
        # The job traps TERM and goes on: only the SIGKILL after --kill-after ends it.
        script = ('trap "echo got TERM" TERM; touch %s; while :; do sleep 0.1; done'
                  % self.path("trap.ready"))
        a = h.submit("--kill-after", "1s", "-J", "trapper", "--", "sh", "-c", script)
        self.wait_file("trap.ready")
        h.wait_state(a, "RUNNING")
        t0 = time.time()
        r = h.gshare("cancel", str(a))
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual(self.wait_rc(a), 128 + 9, "SIGKILL ended it: wait must exit 137")
        rec = self.state(a)
        self.assertEqual((rec["state"], rec["signal"]), ("CANCELLED", 9))
        self.assertGreaterEqual(rec["end_time"] - t0, 0.9, "SIGKILL came before --kill-after")
        r = h.gshare("logs", str(a))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("got TERM", r.stdout, "the job's group did not get SIGTERM first")

        # A job that does not trap TERM dies of it: 143. The whole process group gets it.
        b = h.submit("--", "sh", "-c", "sleep 60 & echo $! > %s; wait" % self.path("child.pid"))
        self.wait_file("child.pid", text="\n")
        child = int(_read(self.path("child.pid")))
        r = h.gshare("cancel", str(b))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.wait_rc(b), 143)
        rec = self.state(b)
        self.assertEqual((rec["state"], rec["signal"]), ("CANCELLED", 15))
        h.wait_for(lambda: not proc_alive(child), 10, "the job's child to get SIGTERM too")
        # wait for several: the highest status.
        self.assertEqual(self.wait_rc(a, b), 143)

    def test_cancel_needs_jobs(self):
        h = self.h
        h.assert_error_line(h.gshare("cancel"), 2)
        h.assert_error_line(h.gshare("cancel", "-s", "USR1"), 2)
        h.assert_error_line(h.gshare("cancel", "4242"), 1, "4242")
        h.assert_error_line(h.gshare("cancel", "-s", "NOSUCHSIG", "1"), 2)

    def test_cancel_by_name(self):
        h = self.h
        s1 = h.submit("-H", "-J", "sweep", "--", "true")
        s2 = h.submit("-H", "-J", "sweep", "--", "true")
        other = h.submit("-H", "-J", "other", "--", "true")
        r = h.gshare("cancel", "-n", "sweep")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        q = h.queue_jobs()
        self.assertEqual([q[i]["state"] for i in (s1, s2, other)], ["CANCELLED", "CANCELLED", "PENDING"])
        # A filter that matches nothing is not an error (scancel).
        r = h.gshare("cancel", "-n", "nobody-has-this-name")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        r = h.gshare("cancel", "-t", "PD")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual(self.state(other)["state"], "CANCELLED")
        mine = h.submit("-H", "--", "true")
        r = h.gshare("cancel", "-u", pwd.getpwuid(os.getuid()).pw_name)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual(self.state(mine)["state"], "CANCELLED")

    def test_cancel_signal_only(self):
        h = self.h
        script = ('trap "echo usr1 >> %s" USR1; touch %s; while :; do sleep 0.1; done'
                  % (self.path("usr1"), self.path("sig.ready")))
        a = h.submit("--kill-after", "1s", "--", "sh", "-c", script)
        self.wait_file("sig.ready")
        h.wait_for(lambda: self.state(a)["pid"], 30, "the job's pid to be recorded")
        p = h.submit("--", "true")  # pending behind a
        r = h.gshare("cancel", "-s", "USR1", str(a))
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.wait_file("usr1", text="usr1")
        time.sleep(0.3)
        self.assertEqual(self.state(a)["state"], "RUNNING", "-s must not cancel")
        # Only running jobs get signals: a pending one is an error, and stays pending.
        h.assert_error_line(h.gshare("cancel", "-s", "USR1", str(p)), 1)
        self.assertEqual(self.state(p)["state"], "PENDING")
        r = h.gshare("cancel", str(a))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.wait_rc(p), 0)

    # ---- hold, release, set-priority, requeue ------------------------------------------
    def test_hold_and_release(self):
        h = self.h
        held = self.appender("order", "-H")
        rec = h.wait_state(held, "PENDING")
        # `wait` on a held job says once why nothing happens, then waits for its release.
        waiter = h.start(h.gshare_argv("wait", str(held)), name="waiter")
        h.wait_for(lambda: "is held (JobHeldUser)" in waiter.stderr, 30,
                   "wait to say the job is held")
        # One more request: answered in a later turn of the daemon's loop than the one that
        # saw it PENDING, after that turn's admission pass, which would have started it.
        rec = self.state(held)
        self.assertEqual((rec["state"], rec["reason"], rec["held"]), ("PENDING", "JobHeldUser", True))
        r = h.gshare("release", str(held))
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual(self.wait_rc(held), 0)
        self.assertEqual(waiter.wait(30), 0)
        said = [line for line in waiter.stderr.splitlines() if "JobHeldUser" in line]
        self.assertEqual(len(said), 1, waiter.stderr)
        self.assertIn("gshare release %d" % held, said[0])
        self.assertEqual(self.lines("order"), [str(held)])

        # hold a job queued behind another: it stays pending when the slot frees.
        blocker, go = self.blocker()
        a = self.appender("order2")
        r = h.gshare("hold", str(a))
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual(self.state(a)["held"], True)
        go()
        h.wait_state(blocker, "COMPLETED")
        # The turn that recorded the blocker's end ended with an admission pass (the slot was
        # free for `a`); this request is answered after it.
        rec = self.state(a)
        self.assertEqual((rec["state"], rec["reason"]), ("PENDING", "JobHeldUser"))
        # hold and release act on pending jobs only.
        h.assert_error_line(h.gshare("hold", str(blocker)), 1)
        h.assert_error_line(h.gshare("release", "4242"), 1)
        r = h.gshare("release", str(a))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.wait_rc(a), 0)

    def test_set_priority_reorders(self):
        h = self.h
        running, go = self.blocker()
        r = h.gshare("set-priority", str(running), "5")  # a running job: its lease priority
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual(self.state(running)["priority"], 5)
        a = self.appender("order")
        b = self.appender("order")
        c = self.appender("order")
        r = h.gshare("set-priority", str(c), "10")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "", ""))
        self.assertEqual(self.state(c)["priority"], 10)
        q = h.queue_jobs()
        pending = [i for i, j in q.items() if j["state"] == "PENDING"]
        self.assertEqual(pending, [c, a, b], "queue must list pending jobs in start order")
        h.wait_for(lambda: [self.state(i)["reason"] for i in (c, a, b)] == ["Resources", "Priority", "Priority"],
                   10, "reason Resources for the first waiting job, Priority behind it")
        r = h.gshare("set-priority", str(a), "-5")
        self.assertEqual(r.returncode, 0, r.stderr)
        go()
        self.assertEqual(self.wait_rc(a, b, c), 0)
        self.assertEqual(self.lines("order"), [str(c), str(b), str(a)])
        h.assert_error_line(h.gshare("set-priority", str(a), "3"), 1)  # ended

    def test_requeue(self):
        h = self.h
        a = self.appender("runs", "-J", "again")
        self.assertEqual(self.wait_rc(a), 0)
        first = self.state(a)
        r = h.gshare("requeue", str(a))
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        h.wait_for(lambda: len(self.lines("runs")) == 2, 30, "the requeued job to run again")
        rec = h.wait_state(a, "COMPLETED")
        self.assertEqual(self.lines("runs"), [str(a), str(a)], "same id, ran twice")
        self.assertEqual((rec["name"], rec["argv"]), (first["name"], first["argv"]))
        self.assertGreater(rec["start_time"], first["end_time"])
        self.assertEqual(len(h.queue_jobs()), 1, "requeue must not create a job")

        # A pending job cannot be requeued; a running one is cancelled first, then runs again.
        p = h.submit("-H", "--", "true")
        h.assert_error_line(h.gshare("requeue", str(p)), 1)
        script = ("echo $GSHARE_JOB_ID >> %s; [ -e %s ] && exit 0; sleep 60"
                  % (self.path("runs2"), self.path("second")))
        b = h.submit("--", "sh", "-c", script)
        h.wait_for(lambda: self.lines("runs2") == [str(b)], 30, "the job to start")
        open(self.path("second"), "w").close()
        r = h.gshare("requeue", str(b))
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual(self.wait_rc(b), 0)
        self.assertEqual(self.lines("runs2"), [str(b), str(b)])
        h.gshare("cancel", str(p))

    def test_run_jobs_and_max_running(self):
        # `run` jobs start at once even when max_running submitted jobs run, and count toward
        # it; `run --hold` waits pending in the foreground; Ctrl-C there cancels it.
        h = self.h
        h.start_daemon()  # see test_queue_restart.py test_readers_while_the_daemon_starts
        go = self.path("fg.go")
        fg = h.start_run(["sh", "-c", "while [ ! -e %s ]; do sleep 0.05; done" % go], ["-J", "fg"], name="fg")
        rec = h.wait_for(lambda: next((j for j in h.queue_jobs().values() if j["name"] == "fg"
                                       and j["state"] == "RUNNING"), None), 30, "the run job")
        self.assertEqual(rec["kind"], "run")
        queued = h.submit("--", "true")
        h.wait_for(lambda: self.state(queued)["reason"] == "Resources", 10, "reason Resources")
        r = h.gshare("run", "--", "true")  # not held back by max_running
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.state(queued)["state"], "PENDING")
        open(go, "w").close()
        self.assertEqual(fg.wait(30), 0, fg.stderr)
        self.assertEqual(self.wait_rc(queued), 0)

        held = h.start_run(["sh", "-c", "echo ran"], ["-H", "-J", "held"], name="held")
        rec = h.wait_for(lambda: next((j for j in h.queue_jobs().values() if j["name"] == "held"), None),
                         30, "the held run job")
        h.wait_for(lambda: self.state(rec["id"])["reason"] == "JobHeldUser", 10, "reason JobHeldUser")
        self.assertIsNone(held.poll())
        r = h.gshare("release", str(rec["id"]))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(held.wait(30), 0, held.stderr)
        self.assertEqual(held.stdout, "ran\n")

        # SIGINT at its default action, as in a terminal (a background job of a
        # non-interactive shell inherits it ignored).
        interrupted = subprocess.Popen(h.gshare_argv("run", "-H", "-J", "ctrlc", "--", "true"), env=h.env,
                                       cwd=h.tmp, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL,
                                       preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        self.addCleanup(lambda: interrupted.poll() is None and (interrupted.kill(), interrupted.wait()))
        rec = h.wait_for(lambda: next((j for j in h.queue_jobs().values() if j["name"] == "ctrlc"), None),
                         30, "the held run job")
        interrupted.send_signal(signal.SIGINT)
        self.assertNotEqual(interrupted.wait(30), 0)
        self.assertEqual(h.wait_state(rec["id"], ("CANCELLED",), timeout=10)["start_time"], None)

    # ---- time limit, begin ------------------------------------------------------------
    def test_time_limit(self):
        h = self.h
        out = self.path("limited.out")
        a = h.submit("-t", "0:02", "--kill-after", "1s", "-o", out, "--", "sh", "-c", "echo start; sleep 60")
        self.assertEqual(self.state(a)["time_limit_ms"], 2000, "0:02 is MM:SS")
        self.assertEqual(self.wait_rc(a, timeout=60), 124)
        rec = self.state(a)
        self.assertEqual((rec["state"], rec["state_code"]), ("TIMEOUT", "TO"))
        self.assertGreaterEqual(rec["end_time"] - rec["start_time"], 1.9)
        text = _read(out)
        self.assertTrue(text.startswith("start\n"), text)
        self.assertTrue(text.endswith("gshare: time limit reached\n"), repr(text))
        r = h.gshare("logs", "-f", str(a))
        self.assertEqual(r.returncode, 124)
        self.assertEqual(r.stdout, text)

    def test_time_and_begin_forms(self):
        h = self.h
        limits = {"2": 120000, "1:30": 90000, "1:00:00": 3600000, "1-0": 86400000,
                  "1-2:03": 93780000, "90s": 90000, "1h30m": 5400000, "0": 0}
        for text, ms in limits.items():
            jid = h.submit("-H", "-t", text, "--", "true")
            self.assertEqual(self.state(jid)["time_limit_ms"], ms, "-t %s (a bare number is minutes)" % text)
        self.assertEqual(self.state(jid)["kill_after_ms"], 30000, "default --kill-after: 30 s")
        now = datetime.datetime.now()
        midnight = datetime.datetime.combine(now.date(), datetime.time())
        noon = midnight + datetime.timedelta(hours=12)
        if noon <= now:
            noon += datetime.timedelta(days=1)
        begins = {"@1700000000": 1700000000.0,
                  "2030-01-02T03:04:05": time.mktime((2030, 1, 2, 3, 4, 5, 0, 0, -1)),
                  "2030-01-02": time.mktime((2030, 1, 2, 0, 0, 0, 0, 0, -1)),
                  "tomorrow": (midnight + datetime.timedelta(days=1)).timestamp(),
                  "noon": noon.timestamp()}
        for text, when in begins.items():
            jid = h.submit("-H", "--begin", text, "--", "true")
            self.assertAlmostEqual(self.state(jid)["begin_time"], when, delta=5, msg="--begin " + text)
        # `now` is the submission's time, in whole seconds: within the submission's bounds.
        t0 = time.time()
        jid = h.submit("-H", "--begin", "now+1h", "--", "true")
        t1 = time.time()
        self.assertGreaterEqual(self.state(jid)["begin_time"], int(t0) + 3600, "--begin now+1h")
        self.assertLessEqual(self.state(jid)["begin_time"], t1 + 3600, "--begin now+1h")
        r = h.gshare("cancel", "-t", "PD")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_begin_time(self):
        h = self.h
        # The begin time is 8 s after the submission: long enough for the reason to be seen
        # before it on a loaded machine; `now` is the submission's time, in whole seconds.
        t0 = time.time()
        a = self.appender("order", "--begin", "now+8s")
        t1 = time.time()
        rec = h.wait_state(a, "PENDING")
        self.assertGreaterEqual(rec["begin_time"], int(t0) + 8)
        self.assertLessEqual(rec["begin_time"], t1 + 8)
        h.wait_for(lambda: self.state(a)["reason"] == "BeginTime" or self.state(a)["state"] != "PENDING",
                   10, "reason BeginTime")
        self.assertEqual(self.state(a)["state"], "PENDING", "started before its --begin time")
        self.assertEqual(self.wait_rc(a, timeout=60), 0)
        rec = self.state(a)
        self.assertGreaterEqual(rec["start_time"], rec["begin_time"])
        self.assertEqual(self.lines("order"), [str(a)])

    # ---- dependencies -------------------------------------------------------------------
    def test_dependency_kinds(self):
        h = self.h
        bad = h.submit("-H", "--", "sh", "-c", "exit 3")
        good = h.submit("-H", "--", "true")
        after_bad_ok = self.appender("deps", "-J", "ok-on-bad", "-d", "afterok:%d" % bad)
        after_bad_notok = self.appender("deps", "-J", "notok-on-bad", "-d", "afternotok:%d" % bad)
        after_bad_any = self.appender("deps", "-J", "any-on-bad", "--dependency", "afterany:%d" % bad)
        after_good_notok = self.appender("deps", "-J", "notok-on-good", "-d", "afternotok:%d" % good)
        after_both = self.appender("deps", "-J", "both", "-d", "afterok:%d,afterany:%d" % (good, bad))
        after_good = self.appender("deps", "-J", "after-good", "--after", str(good))
        waiting = (after_bad_ok, after_bad_notok, after_bad_any, after_good_notok, after_both, after_good)
        h.wait_for(lambda: all(self.state(i)["reason"] == "Dependency" for i in waiting), 30,
                   "reason Dependency")
        self.assertEqual(self.state(after_both)["dependency"], "afterok:%d,afterany:%d" % (good, bad))
        r = h.gshare("release", str(bad), str(good))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.wait_rc(bad), 3)
        for i in (after_bad_notok, after_bad_any, after_both, after_good):
            self.assertEqual(self.wait_rc(i), 0, "job %s must run" % self.state(i)["name"])
        for i in (after_bad_ok, after_good_notok):
            rec = h.wait_for(lambda: (lambda r: r if r["reason"] == "DependencyNeverSatisfied" else None)(
                self.state(i)), 30, "DependencyNeverSatisfied")
            self.assertEqual(rec["state"], "PENDING")
        # `wait` and `logs -f` on a job that can never start say so and exit 1, not wait forever.
        for cmd in (["wait", str(after_bad_ok)], ["logs", "-f", str(after_bad_ok)]):
            h.assert_error_line(h.gshare(*cmd, timeout=30), 1,
                                "job %d can never start" % after_bad_ok)
        self.assertEqual(sorted(self.lines("deps")),
                         sorted(str(i) for i in (after_bad_notok, after_bad_any, after_both, after_good)))
        r = h.gshare("cancel", str(after_bad_ok), str(after_good_notok))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.state(after_bad_ok)["state"], "CANCELLED")

    def test_singleton(self):
        # sbatch --dependency=singleton: one job of a name and user at a time, in submission
        # order, though slots are free; another name is not held back.
        self.h = h = self.harness(queue={"max_running": 4, "gpus": 1})
        a, go = self.blocker("nightly")
        b = self.appender("single", "-J", "nightly", "-d", "singleton")
        c = self.appender("single", "-J", "nightly", "--dependency", "singleton,afterany:%d" % a)
        other = self.appender("single", "-J", "weekly", "-d", "singleton")
        self.assertEqual(self.wait_rc(other), 0)
        for jid in (b, c):
            rec = h.wait_state(jid, "PENDING")
            self.assertEqual(rec["reason"], "Dependency")
        self.assertEqual(self.state(c)["dependency"], "singleton,afterany:%d" % a)
        go()
        self.assertEqual(self.wait_rc(b, c), 0)
        # b ran after a ended, c after b: their appends are in that order.
        self.assertEqual(self.lines("single"), [str(other), str(b), str(c)])
        self.assertGreaterEqual(self.state(b)["start_time"], self.state(a)["end_time"])
        h.assert_error_line(h.gshare("submit", "-d", "singleton:3", "--", "true"), 2,
                            "singleton takes no job id")

    def test_unknown_dependency(self):
        # docs/cli.md: "An unknown job id is an error" (exit 1: "1 error (... unknown job ...)");
        # a malformed dependency is bad usage (2).
        h = self.h
        for opts in (["-d", "afterok:4242"], ["--after", "4242"], ["-d", "afterany:4242"]):
            h.assert_error_line(h.gshare("submit", *opts, "--", "true"), 1, "4242")
        h.assert_error_line(h.gshare("submit", "-d", "afterfoo:1", "--", "true"), 2)
        h.assert_error_line(h.gshare("submit", "-d", "afterok:x", "--", "true"), 2)
        self.assertEqual(h.queue_jobs(), {}, "a refused submission must leave no job")

    # ---- logs, wait, clean --------------------------------------------------------------
    def test_logs_follow(self):
        h = self.h
        _, go = self.blocker()
        a = h.submit("--", "sh", "-c", "for i in 1 2 3; do echo line$i; sleep 0.3; done; echo err >&2; exit 3")
        follower = h.start(h.gshare_argv("logs", "-f", str(a)), name="follow")  # from PENDING
        time.sleep(0.3)
        self.assertIsNone(follower.poll(), "logs -f ended while its job was pending")
        go()
        self.assertEqual(follower.wait(60), 3, follower.stderr)
        self.assertEqual(follower.stdout, "line1\nline2\nline3\nerr\n")
        r = h.gshare("logs", str(a))
        self.assertEqual((r.returncode, r.stdout), (0, "line1\nline2\nline3\nerr\n"))
        self.assertEqual(self.wait_rc(a), 3)
        # -n N: the last N lines, as tail -n (0: none; more than there are: all).
        for n, want in ((2, "line3\nerr\n"), (1, "err\n"), (0, ""), (9, "line1\nline2\nline3\nerr\n")):
            r = h.gshare("logs", "-n", str(n), str(a))
            self.assertEqual((r.returncode, r.stdout), (0, want), n)
        # A log longer than one read-back block, its last line without a newline.
        b = h.submit("--", "sh", "-c", "seq 1 30000; printf tail")
        self.assertEqual(self.wait_rc(b), 0)
        r = h.gshare("logs", "-n", "3", str(b))
        self.assertEqual((r.returncode, r.stdout), (0, "29999\n30000\ntail"))
        h.assert_error_line(h.gshare("logs", "-n", "-1", str(a)), 2)

    def test_submit_wait(self):
        # sbatch --wait: the id on stdout at once, then the job's own exit status.
        h = self.h
        r = h.gshare("submit", "--wait", "--parsable", "--", "sh", "-c", "sleep 0.2; exit 4")
        self.assertEqual(r.returncode, 4, r.stderr)
        jid = int(r.stdout)
        self.assertEqual(self.state(jid)["state"], "FAILED")
        r = h.gshare("submit", "-W", "--array=0-2", "--", "true")
        self.assertEqual(r.returncode, 0, r.stderr)
        tasks = [j for j in h.queue_jobs().values() if j["array_job_id"] == int(r.stdout)]
        self.assertEqual([t["state"] for t in tasks], ["COMPLETED"] * 3)
        h.assert_error_line(h.gshare("logs", "4242"), 1)
        h.assert_error_line(h.gshare("wait", "4242"), 1)
        # A job cancelled while pending: logs -f exits 143 at once.
        p = h.submit("-H", "--", "true")
        h.gshare("cancel", str(p))
        self.assertEqual(h.gshare("logs", "-f", str(p)).returncode, 143)

    def test_clean(self):
        h = self.h
        a = h.submit("-J", "keepme", "--", "sh", "-c", "echo a")
        b = h.submit("-J", "old", "--", "sh", "-c", "echo b")
        self.assertEqual(self.wait_rc(a, b), 0)
        c = h.submit("-H", "-d", "afterok:%d" % a, "--", "true")  # pending, depends on a
        log_a = os.path.join(h.state_dir, "logs", "%d.out" % a)
        log_b = os.path.join(h.state_dir, "logs", "%d.out" % b)
        self.assertEqual((_read(log_a), _read(log_b)), ("a\n", "b\n"))
        r = h.gshare("clean", "--older-than", "1h", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["removed"], [])
        # Let b age, then end d: --older-than 3s takes b and leaves d.
        end_b = self.state(b)["end_time"]
        time.sleep(max(0, end_b + 3.5 - time.time()))
        d = h.submit("--", "true")
        self.assertEqual(self.wait_rc(d), 0)
        r = h.gshare("clean", "--older-than", "3s", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertIn("schema_version", doc)
        self.assertEqual(doc["removed"], [b], "only b ended over 3 s ago and is not depended on")
        self.assertFalse(os.path.exists(log_b), "clean must remove the default log file")
        self.assertTrue(os.path.exists(log_a))
        self.assertEqual(set(h.queue_jobs()), {a, c, d})
        r = h.gshare("clean")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(set(h.queue_jobs()), {a, c}, "a pending job depends on a: it stays")
        h.assert_error_line(h.gshare("clean", "--older-than", "soon"), 2)
        r = h.gshare("release", str(c))
        self.assertEqual(self.wait_rc(c), 0)

    # ---- scripts and job options --------------------------------------------------------

if __name__ == "__main__":
    unittest.main()
