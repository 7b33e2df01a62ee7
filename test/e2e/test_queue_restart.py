"""The batch queue survives its daemon (docs/cli.md "Persistence"): after a kill -9 of the
daemon, the next gshare command starts a new one that still has every submitted job; a job
whose supervisor lives on is re-adopted and ends with its real status; one whose supervisor
died too and left no end file is LOST; an end that happened while no daemon ran is recorded;
pending jobs run. And no job whose id `submit` printed is lost to a kill -9 at any moment."""
import json
import os
import random
import signal
import sqlite3
import socket
import subprocess
import threading
import time
import unittest

from gshare_e2e import FAKE_APP, GSHARE, TestCase, _read, all_pids, proc_alive, proc_cmdline


class QueueRestartTest(TestCase):
    def path(self, name):
        return os.path.join(self.h.tmp, name)

    def kill_daemon(self):
        """kill -9 of every daemon of this harness; waits until they are gone."""
        pids = self.h.daemon_processes()
        self.assertTrue(pids, "no daemon to kill")
        for p in pids:
            os.kill(p, signal.SIGKILL)
        self.h.wait_for(lambda: not any(proc_alive(p) for p in pids), 30, "the daemon to die")
        return pids

    def supervisor_pid(self, job_id):
        """The pid of `gshare job-supervisor --job job_id` of this harness."""
        exe = os.path.realpath(GSHARE)
        for p in all_pids():
            argv = proc_cmdline(p)
            if (len(argv) >= 4 and os.path.realpath(argv[0]) == exe and argv[1] == "job-supervisor"
                    and argv[argv.index("--job") + 1] == str(job_id) and self.h.socket in argv
                    and proc_alive(p)):
                return p
        return None

    def test_kill9_daemon_with_running_and_pending_jobs(self):
        self.h = h = self.harness(queue={"max_running": 3, "gpus": 1})

        def gated(name, code):
            # Runs until <name>.go exists, then exits with code.
            return h.submit("-J", name, "--", "sh", "-c", "touch %s; while [ ! -e %s ]; do sleep 0.05; done; exit %d"
                            % (self.path(name + ".ready"), self.path(name + ".go"), code))

        def go(name):
            open(self.path(name + ".go"), "w").close()

        survivor = gated("survivor", 0)     # re-adopted, ends after the restart
        ends_alone = gated("alone", 5)      # ends while no daemon runs
        orphaned = gated("orphaned", 0)     # its supervisor is killed too: LOST
        for name in ("survivor", "alone", "orphaned"):
            h.wait_for(lambda: os.path.exists(self.path(name + ".ready")), 30, name + " to start")
        pending = [h.submit("-J", "pend%d" % i, "--", "sh", "-c", "echo $GSHARE_JOB_ID >> %s" % self.path("pend"))
                   for i in range(3)]
        h.wait_for(lambda: self.state(survivor)["pid"], 30, "the job's pid to be recorded")
        q = h.queue_jobs()
        self.assertEqual([q[i]["state"] for i in (survivor, ends_alone, orphaned)], ["RUNNING"] * 3)
        self.assertEqual([q[i]["state"] for i in pending], ["PENDING"] * 3)
        job_pid = q[survivor]["pid"]
        sup_orphaned = self.supervisor_pid(orphaned)
        sup_alone = self.supervisor_pid(ends_alone)
        self.assertTrue(sup_orphaned and sup_alone, "no job-supervisor processes found")

        killed = self.kill_daemon()
        os.kill(sup_orphaned, signal.SIGKILL)
        go("alone")
        h.wait_for(lambda: os.path.exists(os.path.join(h.state_dir, "jobs", "%d.end" % ends_alone)),
                   30, "the supervisor of a job that ended without a daemon to write its end file")
        self.assertTrue(proc_alive(job_pid), "the daemon's death must not end a job")

        # Any command restarts the daemon; nothing was lost.
        q = h.queue_jobs()
        self.assertEqual(set(q), {survivor, ends_alone, orphaned, *pending})
        self.assertNotIn(h.daemon_pid(), killed)
        rec = h.wait_state(orphaned, ("LOST", "FAILED"), timeout=30)
        self.assertEqual(rec["state"], "LOST", "docs: a job neither alive nor ended is marked LOST")
        rec = h.wait_state(ends_alone, ("FAILED", "COMPLETED", "LOST"), timeout=30)
        self.assertEqual((rec["state"], rec["exit_code"]), ("FAILED", 5), "its recorded status")
        self.assertEqual(h.gshare("wait", str(orphaned)).returncode, 125, "LOST: 125")
        time.sleep(1.5)  # the new daemon's check of its runner (once a second) must keep it
        rec = self.state(survivor)
        self.assertEqual(rec["state"], "RUNNING", "a job whose supervisor lives is re-adopted")
        # Pending jobs run after the restart (two slots are free again).
        r = h.gshare("wait", *map(str, pending))
        self.assertEqual(r.returncode, 0, r.stderr + h.diagnostics())
        self.assertEqual(sorted(_read(self.path("pend")).split()), sorted(map(str, pending)))
        go("survivor")
        self.assertEqual(h.gshare("wait", str(survivor)).returncode, 0)
        rec = self.state(survivor)
        self.assertEqual((rec["state"], rec["exit_code"], rec["pid"]), ("COMPLETED", 0, job_pid))
        go("orphaned")  # its job outlived its supervisor: let it end

    def state(self, jid):
        return self.h.queue_jobs()[jid]

    @staticmethod
    def accepts(path):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            return True
        except OSError:
            return False
        finally:
            s.close()

    def start_group_daemon(self):
        """`gshare daemon --foreground` in a process group of its own, as systemd starts it in
        its unit's cgroup; returns its pid once it serves."""
        h = self.h
        p = subprocess.Popen(h.gshare_argv("daemon", "--foreground"), env=h.env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=os.setpgrp)
        self.addCleanup(lambda: p.poll() is None and p.kill())
        # The killed daemon's socket file stays: wait until this one accepts, without a client
        # that would start a daemon of its own meanwhile.
        h.wait_for(lambda: self.accepts(h.socket) or p.poll() is not None, 30, "the daemon to listen")
        self.assertIsNone(p.poll(), "the daemon exited")
        self.assertEqual(h.daemon_pid(), p.pid)
        return p

    def test_kill_the_daemons_group_jobs_live_on(self):
        # What `systemctl --user restart gshare` does with KillMode=process is to end the
        # daemon alone; this is the worst case beyond it (every process of the daemon's group,
        # SIGKILL): the job supervisors live in sessions of their own and carry on.
        self.h = h = self.harness(queue={"max_running": 1, "gpus": 1})
        daemon = self.start_group_daemon()
        a = h.submit("--", "sh", "-c", "touch %s; while [ ! -e %s ]; do sleep 0.05; done; exit 0"
                     % (self.path("a.ready"), self.path("a.go")))
        h.wait_for(lambda: os.path.exists(self.path("a.ready")), 30, "the job to start")
        job_pid = h.wait_for(lambda: self.state(a)["pid"], 30, "the job's pid to be recorded")
        supervisor = self.supervisor_pid(a)
        self.assertTrue(supervisor)
        self.assertNotEqual(os.getpgid(supervisor), daemon.pid)
        os.killpg(daemon.pid, signal.SIGKILL)
        daemon.wait(30)
        self.assertTrue(proc_alive(job_pid) and proc_alive(supervisor), "the job died with the daemon's group")
        self.start_group_daemon()
        time.sleep(1.5)  # the new daemon checks its re-adopted jobs' runners once a second
        rec = self.state(a)
        self.assertEqual((rec["state"], rec["pid"]), ("RUNNING", job_pid), "re-adopted")
        open(self.path("a.go"), "w").close()
        self.assertEqual(h.gshare("wait", str(a)).returncode, 0)
        rec = self.state(a)
        self.assertEqual((rec["state"], rec["exit_code"], rec["pid"]), ("COMPLETED", 0, job_pid))
        b = h.submit("--", "true")
        self.assertEqual(h.gshare("wait", str(b)).returncode, 0)
        self.assertEqual(self.state(b)["state"], "COMPLETED")

    def test_readopted_job_reports_failure(self):
        # Like the survivor above, with a non-zero status: the supervisor reports the real one.
        self.h = h = self.harness(queue={"max_running": 1, "gpus": 1})
        a = h.submit("--", "sh", "-c", "touch %s; while [ ! -e %s ]; do sleep 0.05; done; exit 9"
                     % (self.path("a.ready"), self.path("a.go")))
        h.wait_for(lambda: os.path.exists(self.path("a.ready")), 30, "the job to start")
        b = h.submit("--", "true")
        c = h.submit("--begin", "now+3s", "--", "true")  # its --begin time passes meanwhile
        self.kill_daemon()
        self.assertEqual(h.wait_state(a, "RUNNING")["state"], "RUNNING")  # restarts the daemon
        self.assertEqual([self.state(i)["state"] for i in (b, c)], ["PENDING", "PENDING"])
        open(self.path("a.go"), "w").close()
        self.assertEqual(h.gshare("wait", str(a)).returncode, 9)
        self.assertEqual((self.state(a)["state"], self.state(a)["exit_code"]), ("FAILED", 9))
        self.assertEqual(h.gshare("wait", str(b), str(c)).returncode, 0)
        self.assertGreaterEqual(self.state(c)["start_time"], self.state(c)["begin_time"])

    def test_gpu_time_goes_on_across_a_restart(self):
        # A job holds the GPU for ~10 s; the daemon is stopped (as after a config change) and
        # started again while it runs: its GPU time at the end counts both daemons' share (its
        # shim reconnects within 2 s and holds the GPU again for the rest).
        self.h = h = self.harness(queue={"max_running": 1, "gpus": 1})
        h.start_daemon()
        a = h.submit("--", FAKE_APP, "--kernels", "100", "--kernel-ms", "100")

        def lease():
            rec = h.job_record(lambda j: j.get("id") == a) or {}
            return rec.get("lease_seconds", 0)
        h.wait_for(lambda: lease() >= 4.0, 60, "4 s of GPU time")
        before = lease()
        self.assertEqual(h.gshare("daemon", "stop").returncode, 0)
        self.assertEqual(h.wait_state(a, "RUNNING")["state"], "RUNNING")  # restarts the daemon
        self.assertEqual(h.gshare("wait", str(a), timeout=120).returncode, 0)
        r = h.gshare("acct", "-j", str(a), "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        run = json.loads(r.stdout)["jobs"][0]
        self.assertGreaterEqual(run["gpu_seconds"], before + 1.5, run)

    def test_cancel_readopted_job(self):
        self.h = h = self.harness(queue={"max_running": 1, "gpus": 1})
        a = h.submit("--kill-after", "1s", "--", "sh", "-c",
                     'trap "" TERM; touch %s; while :; do sleep 0.1; done' % self.path("a.ready"))
        h.wait_for(lambda: os.path.exists(self.path("a.ready")), 30, "the job to start")
        self.kill_daemon()
        r = h.gshare("cancel", str(a))  # restarts the daemon, which re-adopts the job
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual(h.gshare("wait", str(a)).returncode, 128 + 9)
        self.assertEqual(self.state(a)["state"], "CANCELLED")

    def test_cancel_readopted_job_whose_start_was_not_recorded(self):
        # The daemon died while the supervisor reported the job's start: the row has no pid
        # (the supervisor logs "start not recorded"). The next daemon finds the job under its
        # supervisor, so a cancel still ends it.
        self.h = h = self.harness(queue={"max_running": 1, "gpus": 1})
        a = h.submit("--kill-after", "1s", "--", "sh", "-c",
                     'trap "" TERM; touch %s; while :; do sleep 0.1; done' % self.path("a.ready"))
        h.wait_for(lambda: os.path.exists(self.path("a.ready")), 30, "the job to start")
        job_pid = h.wait_for(lambda: self.state(a)["pid"], 30, "the job's pid to be recorded")
        self.kill_daemon()
        db = sqlite3.connect(os.path.join(h.state_dir, "gshare.db"))
        db.execute("UPDATE jobs SET pid = NULL WHERE id = ?", (a,))
        db.commit()
        db.close()
        r = h.gshare("cancel", str(a))  # restarts the daemon, which re-adopts the job
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assertEqual(h.gshare("wait", str(a)).returncode, 128 + 9)
        rec = self.state(a)
        self.assertEqual((rec["state"], rec["pid"]), ("CANCELLED", job_pid))
        self.assertFalse(proc_alive(job_pid))

    def test_kill9_during_submits(self):
        self.h = h = self.harness(queue={"max_running": 1, "gpus": 1})
        h.start_daemon()
        rng = random.Random(7)
        printed, failed, kills = [], [], []

        def killer():
            time.sleep(rng.uniform(0, 0.03))  # lands during one of the next submits
            for p in h.daemon_processes():
                try:
                    os.kill(p, signal.SIGKILL)
                    kills.append(p)
                except OSError:
                    pass

        threads = []
        for i in range(50):
            if i in (8, 20, 33, 45):
                t = threading.Thread(target=killer)
                t.start()
                threads.append(t)
            r = h.gshare("submit", "-H", "-J", "s%d" % i, "--", "true")
            if r.returncode == 0:
                self.assertRegex(r.stdout, r"\A[0-9]+\n\Z")
                self.assertEqual(r.stderr, "")
                printed.append(int(r.stdout))
            else:
                # A submission the kill interrupted fails cleanly: exit 1, one line, no id.
                h.assert_error_line(r, 1)
                failed.append(r.stderr)
        for t in threads:
            t.join()
        self.assertGreaterEqual(len(kills), 2, "the daemon was hardly killed: nothing tested")
        self.assertLessEqual(len(failed), 2 * len(kills), failed)  # one in flight per kill, or so
        self.assertEqual(len(set(printed)), len(printed), "an id was given twice")
        q = h.queue_jobs()
        self.assertEqual([i for i in printed if i not in q], [], "a job whose id was printed is lost")
        self.assertTrue(all(q[i]["state"] == "PENDING" and q[i]["held"] for i in printed))
        r = h.gshare("release", *map(str, printed))
        self.assertEqual(r.returncode, 0, r.stderr)
        r = h.gshare("wait", *map(str, printed), timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr + h.diagnostics())

    def test_readers_while_the_daemon_starts(self):
        self.h = h = self.harness(queue={"max_running": 1, "gpus": 1})
        failures = []
        for trial in range(20):  # a race: a few tries on fresh state directories
            run_dir = os.path.join(h.tmp, "run%d" % trial)
            os.mkdir(run_dir, 0o700)
            env = dict(h.env, XDG_RUNTIME_DIR=run_dir, GSHARE_STATE_DIR=os.path.join(h.tmp, "state%d" % trial))
            procs = [subprocess.Popen(h.gshare_argv("queue", "-a", "--json"), env=env, cwd=h.tmp,
                                      stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True) for _ in range(6)]
            for p in procs:
                out, err = p.communicate(timeout=60)
                if p.returncode != 0:
                    failures.append(err.strip())
            h.gshare("daemon", "stop", env=env)
            if failures:
                break
        self.assertEqual(failures, [])


if __name__ == "__main__":
    unittest.main()
