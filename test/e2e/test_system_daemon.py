"""Issue 21, items 1 and 4: one system daemon serves every user, and a submitted job runs as
its owner. Two users made with useradd, each in cron's bare environment (env -i with HOME and
PATH, plus GSHARE_SYSTEM_SOCKET to point at this test's private system socket), submit
fake-driver jobs to one `gshare daemon --system` that root started on private paths (its
config file names [system] socket and state_dir). Shown: both users' jobs reach that daemon
and run; `gshare queue` of one user lists the other's job; a job's process has its owner's
uid and groups and its output file belongs to the owner; an --output path the owner cannot
write is refused at submission, or fails the job when it became unwritable since, and the
daemon never creates it; the default log is the owner's alone; the
database is not readable by users; and a user with no system daemon still gets a daemon of
their own. Needs root (CI runs as root)."""
import json
import os
import shutil
import subprocess
import unittest

from gshare_e2e import FAKE_APP, FAKECUDA_DIR, GSHARE, SHIM
from system_case import SystemDaemonCase

USERS = ("gshare21a", "gshare21b")


@unittest.skipUnless(os.geteuid() == 0, "needs root: it creates users and a system daemon")
@unittest.skipUnless(shutil.which("useradd") and shutil.which("runuser"), "needs useradd, runuser")
class SystemDaemonTest(SystemDaemonCase):
    def setUp(self):
        self.setup_system(USERS, '[scheduler]\nsharing = "exclusive"\nquantum = "20s"\n'
                          '[queue]\nmax_running = 2\ngpus = 1\n',
                          system='max_priority = 10\n[system.priority_ceiling]\n%s = 50\n' % USERS[1])
        self.a, self.b = self.users

    def job_json(self, user, job):
        r = self.as_user(user, "queue", "-a", "--json", check_rc=0)
        return {j["id"]: j for j in json.loads(r.stdout)["jobs"]}[job]

    def test_two_users_jobs_take_turns_under_one_lease(self):
        """Two users' jobs on the one fake GPU in exclusive mode: their kernels never overlap
        and the lease goes back and forth between them."""
        a, b = self.a, self.b
        self.start_system()
        kernels = 20
        jobs = {}
        for user in (a, b):
            pid_file = os.path.join(self.homes[user.pw_name], "pid")
            jobs[user.pw_name] = (self.submit(
                user, "--quantum", "300ms", "--", "sh", "-c",
                "echo $$ > %s; exec %s --kernels %d --kernel-ms 30" % (pid_file, FAKE_APP, kernels)),
                pid_file)
        pids = {}
        for user in (a, b):
            job, pid_file = jobs[user.pw_name]
            self.as_user(user, "wait", str(job), check_rc=0)
            with open(pid_file) as f:
                pids[user.pw_name] = int(f.read())
        a_ops = self.h.ops("K", pids[a.pw_name])
        b_ops = self.h.ops("K", pids[b.pw_name])
        self.assertEqual(len(a_ops), kernels, self.h.diagnostics())
        self.assertEqual(len(b_ops), kernels, self.h.diagnostics())
        self.h.assert_exclusive(a_ops, b_ops, min_switches=2)

    def test_users_cannot_steer_or_see_into_each_others_jobs(self):
        """Item 2 and 3: requests are judged by the peer's uid; B cannot cancel, hold,
        re-prioritize, suspend or signal A's job, nor see its command (exit 5 each, A's job
        untouched); priorities above a user's ceiling are refused; admin-only requests are
        refused to users; root may steer anyone's job; a process of B that claims A's job id is
        refused, and A's own processes join A's job with its token."""
        a, b = self.a, self.b
        self.start_system()
        ja = self.submit(a, "-J", "secret-name-visible", "--", "sh", "-c",
                         "%s --kernels 2 --kernel-ms 20; sleep 60" % FAKE_APP)
        jb = self.submit(b, "--", "sh", "-c", "echo b-was-here")
        self.as_user(b, "wait", str(jb), check_rc=0)
        for attempt in (("cancel", str(ja)), ("hold", str(ja)), ("set-priority", str(ja), "5"),
                        ("suspend", str(ja)), ("cancel", "--signal", "KILL", str(ja)),
                        ("requeue", str(ja))):
            r = self.as_user(b, *attempt)
            self.assertEqual(r.returncode, 5, "%s: %s" % (attempt, r.stderr))
            self.assertIn("permission denied: job %d belongs to %s" % (ja, USERS[0]), r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        seen_by_b = self.job_json(b, ja)
        self.assertEqual(seen_by_b["state"], "RUNNING")  # untouched
        self.assertEqual(seen_by_b["name"], "secret-name-visible")  # the queue is public
        self.assertEqual(seen_by_b["argv"], [])
        self.assertEqual(seen_by_b["cwd"], "")
        self.assertIn("sleep 60", " ".join(self.job_json(a, ja)["argv"]))
        self.assertEqual(self.job_json(b, jb)["argv"], ["sh", "-c", "echo b-was-here"])
        r = self.as_user(b, "status", str(ja), "--json", check_rc=0)
        self.assertNotIn("sleep 60", r.stdout)
        self.assertTrue(json.loads(r.stdout)["hidden"], r.stdout)

        # Priority ceilings: max_priority 10 for A, B's own entry 50.
        r = self.as_user(a, "submit", "-p", "11", "--", "true")
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertIn("priority 11 is above your ceiling of 10", r.stderr)
        self.submit(a, "-p", "10", "--", "true")
        self.submit(b, "-p", "50", "--", "true")
        r = self.as_user(b, "submit", "-p", "51", "--", "true")
        self.assertEqual(r.returncode, 5, r.stderr)
        r = self.as_user(a, "set-priority", str(ja), "11")
        self.assertEqual(r.returncode, 5, r.stderr)
        # Admin-only requests.
        r = self.as_user(b, "scheduler", "off")
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertIn("only an admin may switch the scheduler", r.stderr)
        r = self.as_user(b, "parallel", "3")
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertIn("only an admin may pause, resume or resize the queue", r.stderr)
        r = self.as_user(b, "parallel")  # reading it is anyone's
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("job(s) at once per GPU slot ([queue] max_running)", r.stdout)

        # B's process claims A's job id without its token: refused; A's job keeps its shims.
        argv = ["runuser", "-u", b.pw_name, "--", "env", "-i", "PATH=/usr/bin:/bin",
                "LD_LIBRARY_PATH=" + FAKECUDA_DIR, "FAKE_CUDA_LOG=" + self.h.log,
                "LD_PRELOAD=" + SHIM, "GSHARE_SOCKET=" + self.socket,
                "GSHARE_JOB_ID=%d" % ja, "GSHARE_JOB_TOKEN=" + "0" * 32,
                FAKE_APP, "--kernels", "1", "--kernel-ms", "5"]
        subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        self.assertIn("(uid %d) claims job %d without its token: refused" % (b.pw_uid, ja),
                      self.log())
        self.assertEqual(self.job_json(a, ja)["state"], "RUNNING")
        # A's own job joined with its token (it held the lease for its kernels).
        self.assertEqual(self.log().count("claims job %d without its token" % ja), 1, self.log())
        r = subprocess.run([GSHARE, "--config", self.config, "status", str(ja), "--json"],
                           env=dict(self.h.env, GSHARE_SOCKET=self.socket),
                           stdout=subprocess.PIPE, text=True, timeout=30)
        status = json.loads(r.stdout)
        self.assertGreater(status["lease_seconds"], 0, status)

        # Root is an admin: it may cancel A's job.
        r = subprocess.run([GSHARE, "cancel", str(ja)], env=dict(self.h.env,
                           GSHARE_SOCKET=self.socket), stderr=subprocess.PIPE, text=True,
                           timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.as_user(a, "wait", str(ja))
        self.assertEqual(self.job_json(a, ja)["state"], "CANCELLED")

    def test_system_daemon_serves_both_users_as_themselves(self):
        h, a, b = self.h, self.a, self.b
        # Only root may start it (documented exit 4).
        r = self.as_user(a, "--config", self.config, "daemon", "start", "--system")
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertIn("root", r.stderr)
        r = subprocess.run([GSHARE, "--config", self.config, "daemon", "start", "--system"],
                           env=h.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr + self.log())
        self.assertIn("system daemon running at " + self.socket, r.stderr)
        self.assertEqual(os.stat(self.socket).st_mode & 0o777, 0o666)
        self.assertEqual(os.stat(os.path.dirname(self.socket)).st_mode & 0o777, 0o755)
        self.assertEqual(os.stat(self.state).st_mode & 0o777, 0o711)

        fake = "%s --kernels 3 --kernel-ms 20" % FAKE_APP
        job = "id -u; id -G; " + fake
        out_a = os.path.join(self.homes["gshare21a"], "a.out")
        ja = self.submit(a, "-o", out_a, "--", "sh", "-c", job)
        jb = self.submit(b, "--", "sh", "-c", job)  # default log, gshare's own
        # Outputs A may not write are refused at submission, checked as A; one that A could
        # write then but not when the job starts fails the job, and the daemon (root) never
        # creates it.
        other_home = os.path.join(self.homes["gshare21b"], "from-a")
        for path in ("/root/gshare21-forbidden", other_home):
            r = self.as_user(a, "submit", "-o", path, "--", "true")
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn("--output %s: directory %s: Permission denied"
                          % (path, os.path.dirname(path)), r.stderr)
        closed = os.path.join(self.homes["gshare21a"], "closed")
        os.makedirs(closed)
        os.chown(closed, a.pw_uid, a.pw_gid)
        closed_out = os.path.join(closed, "out")
        bad_later = self.submit(a, "-H", "-o", closed_out, "--", "true")
        os.chmod(closed, 0o500)
        self.as_user(a, "release", str(bad_later), check_rc=0)

        # One daemon, one queue: A sees B's job.
        r = self.as_user(a, "queue", "-a", "--json", check_rc=0)
        listed = {j["id"]: j for j in json.loads(r.stdout)["jobs"]}
        self.assertIn(jb, listed)
        self.assertEqual(listed[jb]["user"], "gshare21b")
        self.assertEqual(listed[ja]["uid"], a.pw_uid)
        r = self.as_user(a, "status", check_rc=0)
        self.assertIn("system daemon", r.stdout)
        self.assertIn(self.socket, r.stdout)
        r = self.as_user(b, "status", "--json", check_rc=0)
        self.assertEqual(json.loads(r.stdout)["daemon"]["mode"], "system")

        self.as_user(a, "wait", str(ja), check_rc=0)
        self.as_user(b, "wait", str(jb), check_rc=0)
        # The job ran as A, with A's groups, and its output is A's.
        with open(out_a) as f:
            lines = f.read().splitlines()
        groups = sorted(os.getgrouplist(a.pw_name, a.pw_gid))
        self.assertEqual(lines[0], str(a.pw_uid), lines)
        self.assertEqual(sorted(int(g) for g in lines[1].split()), groups, lines)
        self.assertIn("fake_app: done 3", lines)
        self.assertEqual(os.stat(out_a).st_uid, a.pw_uid)
        # B's job used the fake driver through the system daemon too.
        r = self.as_user(b, "logs", str(jb), check_rc=0)
        self.assertEqual(r.stdout.splitlines()[0], str(b.pw_uid))
        self.assertIn("fake_app: done 3", r.stdout)
        # Its default log is B's alone: A cannot read it, nor list B's directory.
        log_b = os.path.join(self.state, "users", str(b.pw_uid), "logs", "%d.out" % jb)
        self.assertEqual(os.stat(log_b).st_uid, b.pw_uid)
        r = subprocess.run(["runuser", "-u", "gshare21a", "--", "cat", log_b],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertNotEqual(r.returncode, 0)
        r = self.as_user(a, "logs", str(jb))
        self.assertNotEqual(r.returncode, 0)
        self.assertNotIn("fake_app", r.stdout)
        # Nor the database or the daemon's log.
        for private in ("gshare.db", "daemon.log"):
            r = subprocess.run(["runuser", "-u", "gshare21a", "--", "cat",
                                os.path.join(self.state, private)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            self.assertNotEqual(r.returncode, 0, private)

        # Outputs A may not write: the job fails and nobody created the file.
        r = self.as_user(a, "wait", str(bad_later))
        self.assertNotEqual(r.returncode, 0, "job %d with --output %s" % (bad_later, closed_out))
        for path in ("/root/gshare21-forbidden", other_home, closed_out):
            self.assertFalse(os.path.exists(path), path)

    def test_without_a_system_daemon_a_user_gets_their_own(self):
        a = self.a
        run = os.path.join(self.homes["gshare21a"], "run")
        os.makedirs(run, 0o700)
        os.chown(run, a.pw_uid, a.pw_gid)
        own = {"XDG_RUNTIME_DIR": run}
        self.addCleanup(lambda: self.as_user(a, "daemon", "stop", system=False, extra_env=own))
        r = self.as_user(a, "daemon", system=False, extra_env=own, check_rc=0)
        self.assertIn("user daemon running at " + os.path.join(run, "gshare", "gshare.sock"),
                      r.stderr)
        r = self.as_user(a, "status", "--json", system=False, extra_env=own, check_rc=0)
        daemon = json.loads(r.stdout)["daemon"]
        self.assertEqual(daemon["mode"], "user")
        self.assertEqual(daemon["socket"], os.path.join(run, "gshare", "gshare.sock"))


if __name__ == "__main__":
    unittest.main()
