"""Hostile users on the system daemon, the clients' side. One `gshare daemon --system` serves
two users made with useradd. Shown: every command chooses its daemon by one rule, so a user
whose GSHARE_SOCKET names the system daemon where their own rules would look elsewhere (a
Slurm task: its task prolog exports the socket, and nothing tells the task where the system
socket is) lists, waits for and reads the accounts of the system daemon's jobs, `gshare run`
jobs among them, instead of a database of their own; Slurm's Prolog and Epilog, run as root,
find the system daemon through GSHARE_SYSTEM_SOCKET as the task prolog does; and reading
another user's job's output is refused as a permission, not taken for a job that wrote to a
terminal. Needs root (CI runs as root)."""
import json
import os
import shutil
import subprocess
import unittest

from gshare_e2e import GSHARE
from system_case import SystemDaemonCase

USERS = ("gsharehca", "gsharehcb")


@unittest.skipUnless(os.geteuid() == 0, "needs root: it creates users and a system daemon")
@unittest.skipUnless(shutil.which("useradd") and shutil.which("runuser"), "needs useradd, runuser")
class SystemDaemonClientsTest(SystemDaemonCase):
    def setUp(self):
        self.setup_system(USERS, "[queue]\nmax_running = 2\ngpus = 1\n")
        self.a, self.b = self.users
        self.start_system()

    def as_task(self, user, *args, check_rc=None):
        """`gshare ARGS` as `user` the way a Slurm task runs it: GSHARE_SOCKET names the
        system daemon, and GSHARE_SYSTEM_SOCKET points nowhere."""
        return self.as_user(user, *args, system=False, extra_env={"GSHARE_SOCKET": self.socket},
                            check_rc=check_rc)

    def test_gshare_socket_of_the_system_daemon_lists_its_jobs(self):
        a, b = self.a, self.b
        sleeper = self.submit(a, "-J", "a-sleeps", "--", "sleep", "60")
        r = self.as_user(a, "run", "-J", "a-ran", "--", "true", check_rc=0)
        listed = json.loads(self.as_user(a, "queue", "-a", "--json", check_rc=0).stdout)
        ran = [j["id"] for j in listed["jobs"] if j["name"] == "a-ran"]
        self.assertEqual(len(ran), 1, listed)
        self.as_user(a, "wait", str(ran[0]), check_rc=0)

        for user in (a, b):
            r = self.as_task(user, "queue", "-a", "--json", check_rc=0)
            jobs = {j["id"]: j for j in json.loads(r.stdout)["jobs"]}
            self.assertEqual(jobs.get(sleeper, {}).get("name"), "a-sleeps", r.stdout + self.log())
            self.assertEqual(jobs.get(ran[0], {}).get("kind"), "run", r.stdout)
            self.assertEqual(jobs[ran[0]]["state"], "COMPLETED", r.stdout)
            r = self.as_task(user, "queue", check_rc=0)
            self.assertIn("a-sleeps", r.stdout)
            r = self.as_task(user, "status", "--json", check_rc=0)
            self.assertEqual(json.loads(r.stdout)["daemon"]["mode"], "system")
            self.as_task(user, "wait", str(ran[0]), check_rc=0)
            r = self.as_task(user, "acct", "-a", "-j", str(ran[0]), "-P", "-n", "-o", "JobID,State",
                             check_rc=0)
            self.assertEqual(r.stdout, "%d|COMPLETED\n" % ran[0], r.stderr)
            # Nothing of a daemon of their own was started or read.
            self.assertFalse(os.path.exists(os.path.join(
                self.homes[user.pw_name], ".local", "state", "gshare", "gshare.db")))

        # B may list A's job, not read its output: a refusal (exit 5), not "wrote to the
        # terminal".
        r = self.as_task(b, "logs", str(sleeper))
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertEqual(r.stdout, "")
        self.assertRegex(r.stderr, r"\Agshare: permission denied: job %d belongs to %s[^\n]*\n\Z"
                         % (sleeper, USERS[0]))
        self.as_user(a, "cancel", str(sleeper), check_rc=0)

    def test_slurm_prolog_and_epilog_find_the_system_daemon_through_its_variable(self):
        env = dict(self.h.env, GSHARE_SYSTEM_SOCKET=self.socket, SLURM_JOB_ID="4242",
                   SLURM_JOB_UID=str(self.a.pw_uid), SLURM_JOB_PARTITION="batch")
        for hook in ("prolog", "epilog"):
            r = subprocess.run([GSHARE, "slurm", hook], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, timeout=60)
            self.assertEqual((r.returncode, r.stderr), (0, ""), hook + "\n" + self.log())
        self.assertIn("Slurm job 4242 of %s: partition batch" % USERS[0], self.log())


if __name__ == "__main__":
    unittest.main()
