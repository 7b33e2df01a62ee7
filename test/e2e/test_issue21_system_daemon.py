"""Issue 21, items 1 and 4: one system daemon serves every user, and a submitted job runs as
its owner. Two users made with useradd, each in cron's bare environment (env -i with HOME and
PATH, plus GSHARE_SYSTEM_SOCKET to point at this test's private system socket), submit
fake-driver jobs to one `gshare daemon --system` that root started on private paths (its
config file names [system] socket and state_dir). Shown: both users' jobs reach that daemon
and run; `gshare queue` of one user lists the other's job; a job's process has its owner's
uid and groups and its output file belongs to the owner; an --output path the owner cannot
write fails the job and the daemon never creates it; the default log is the owner's alone; the
database is not readable by users; and a user with no system daemon still gets a daemon of
their own. Needs root (CI runs as root)."""
import json
import os
import shutil
import subprocess
import unittest

from gshare_e2e import FAKE_APP, GSHARE, SystemDaemonCase

USERS = ("gshare21a", "gshare21b")


@unittest.skipUnless(os.geteuid() == 0, "needs root: it creates users and a system daemon")
@unittest.skipUnless(shutil.which("useradd") and shutil.which("runuser"), "needs useradd, runuser")
class SystemDaemonTest(SystemDaemonCase):
    def setUp(self):
        self.setup_system(USERS, '[scheduler]\nsharing = "exclusive"\nquantum = "20s"\n'
                          '[queue]\nmax_running = 2\ngpus = 1\n')
        self.a, self.b = self.users

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
        bad_root = self.submit(a, "-o", "/root/gshare21-forbidden", "--", "true")
        other_home = os.path.join(self.homes["gshare21b"], "from-a")
        bad_other = self.submit(a, "-o", other_home, "--", "true")

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
        for bad, path in ((bad_root, "/root/gshare21-forbidden"), (bad_other, other_home)):
            r = self.as_user(a, "wait", str(bad))
            self.assertNotEqual(r.returncode, 0, "job %d with --output %s" % (bad, path))
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
