"""Issue 21, item 5: fair share between users under one system daemon. Three users made with
useradd submit fake-driver jobs at one priority while a job of the first holds the queue's only
slot (max_running 1): once it ends, the jobs start round robin between users (the user never
started first, by submission), not in submission order. With max_running 2 and
max_running_per_user 1, a user's second job waits with Slurm's reason QOSMaxJobsPerUserLimit
while another user's job takes the free slot, and `gshare status` shows each user's share.
Needs root (CI runs as root)."""
import json
import os
import shutil
import unittest

from gshare_e2e import FAKE_APP
from system_case import SystemDaemonCase

USERS = ("gshare21a", "gshare21b", "gshare21c")


@unittest.skipUnless(os.geteuid() == 0, "needs root: it creates users and a system daemon")
@unittest.skipUnless(shutil.which("useradd") and shutil.which("runuser"), "needs useradd, runuser")
class FairShareTest(SystemDaemonCase):
    def setUp(self):
        self.go = None

    def start(self, queue):
        self.setup_system(USERS, '[scheduler]\nsharing = "exclusive"\n[queue]\ngpus = 1\n' + queue)
        self.a, self.b, self.c = self.users
        self.go = os.path.join(self.sys, "go")
        self.addCleanup(self.release)  # never leave a blocker waiting
        self.start_system()

    def release(self):
        open(self.go, "w").close()

    def blocker(self, user, name):
        """A job of `user` that runs until release() (at most 30 s)."""
        wait = "i=0; while [ ! -e %s ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done" % self.go
        return self.submit(user, "-J", name, "--", "sh", "-c", wait)

    def jobs(self, user):
        r = self.as_user(user, "queue", "-a", "--json", check_rc=0)
        return {j["id"]: j for j in json.loads(r.stdout)["jobs"]}

    def test_jobs_start_round_robin_between_users(self):
        self.start("max_running = 1\n")
        a, b, c = self.a, self.b, self.c
        first = self.blocker(a, "a0")
        self.h.wait_for(lambda: self.jobs(a)[first]["state"] == "RUNNING", 20, "a0 running")
        fake = ["--", FAKE_APP, "--kernels", "2", "--kernel-ms", "5"]
        ids = {first: "a0"}
        owners = {first: a}
        # Submission order: all of A's, then B's, then C's.
        for user, name in ((a, "a1"), (a, "a2"), (a, "a3"), (b, "b1"), (b, "b2"), (c, "c1")):
            job = self.submit(user, "-J", name, *fake)
            ids[job] = name
            owners[job] = user
        self.release()
        for job, user in owners.items():
            self.as_user(user, "wait", str(job), check_rc=0)
        jobs = self.jobs(c)
        order = [ids[j] for j in sorted(ids, key=lambda j: jobs[j]["start_time"])]
        # A ran last: B and C (never started, B submitted first) come before A's next; then
        # round robin A, B, A; A's last job has nobody left to alternate with.
        self.assertEqual(order, ["a0", "b1", "c1", "a1", "b2", "a2", "a3"], self.log())

    def test_a_user_over_max_running_per_user_waits(self):
        self.start("max_running = 2\nmax_running_per_user = 1\n")
        a, b = self.a, self.b
        a1 = self.blocker(a, "a1")
        a2 = self.blocker(a, "a2")
        b1 = self.blocker(b, "b1")
        self.h.wait_for(lambda: self.jobs(b)[b1]["state"] == "RUNNING", 20, "b1 running")
        jobs = self.jobs(b)  # every user sees the queue and its reasons
        self.assertEqual(jobs[a1]["state"], "RUNNING")
        self.assertEqual(jobs[a2]["state"], "PENDING")
        self.assertEqual(jobs[a2]["reason"], "QOSMaxJobsPerUserLimit")
        r = self.as_user(a, "queue", check_rc=0)
        self.assertIn("QOSMaxJobsPerUserLimit", r.stdout)
        # Each user's share in `gshare status`.
        r = self.as_user(b, "status", "--json", check_rc=0)
        users = {u["user"]: u for u in json.loads(r.stdout)["users"]}
        self.assertEqual((users["gshare21a"]["running"], users["gshare21a"]["pending"]), (1, 1))
        self.assertEqual((users["gshare21b"]["running"], users["gshare21b"]["pending"]), (1, 0))
        r = self.as_user(b, "status", check_rc=0)
        self.assertRegex(r.stdout, r"USER +RUNNING +PENDING")
        self.assertRegex(r.stdout, r"gshare21a +1 +1 ")
        self.release()
        for job, user in ((a1, a), (a2, a), (b1, b)):
            self.as_user(user, "wait", str(job), check_rc=0)


if __name__ == "__main__":
    unittest.main()
