"""Issue 24 item 5: `[notify] command` runs when a job ends, with the job's fields in its
environment:
  - a user's daemon: a job that completes, one that fails with exit 3 and a pending one that is
    cancelled each run the command once, with their id, state, exit code and name;
  - the system daemon (root) runs it as the job's owner, a second Unix user made with useradd,
    in the job's directory: the file it writes is that user's, and says so."""
import os
import pwd
import unittest

from gshare_e2e import TestCase
from system_case import SystemDaemonCase


def read_lines(path):
    try:
        with open(path) as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


class NotifyTest(TestCase):
    def test_the_command_runs_once_per_ended_job(self):
        h0 = self.harness()
        ends = os.path.join(h0.tmp, "ends")
        command = ('echo "$GSHARE_JOB_ID $GSHARE_JOB_STATE $GSHARE_JOB_EXIT_CODE '
                   '$GSHARE_JOB_NAME" >> %s' % ends)
        h = self.harness(notify={"command": command})
        h.start_daemon()
        ok = h.submit("-J", "fine", "--", "true")
        bad = h.submit("-J", "broken", "--", "sh", "-c", "exit 3")
        held = h.submit("-H", "-J", "never", "--", "true")
        h.wait_state(ok, "COMPLETED")
        h.wait_state(bad, "FAILED")
        self.assertEqual(h.gshare("cancel", str(held)).returncode, 0)
        h.wait_for(lambda: len(read_lines(ends)) >= 3, 15, "three lines in %s" % ends)
        self.assertEqual(sorted(read_lines(ends)),
                         sorted(["%d COMPLETED 0 fine" % ok, "%d FAILED 3 broken" % bad,
                                 "%d CANCELLED  never" % held]))


    def test_mail_user_and_type_reach_the_command(self):
        """--mail-user/--mail-type (sbatch's) are the command's to use: given, defaulted to the
        owner, or absent; a bad type is a usage error and queues nothing."""
        h0 = self.harness()
        ends = os.path.join(h0.tmp, "ends")
        command = ('echo "$GSHARE_JOB_ID [$GSHARE_JOB_MAIL_USER] [$GSHARE_JOB_MAIL_TYPE]" >> %s'
                   % ends)
        h = self.harness(notify={"command": command})
        h.start_daemon()
        told = h.submit("--mail-user", "ada@example.org", "--mail-type", "fail,end", "--", "true")
        owner = h.submit("--mail-type", "ALL", "--", "true")
        quiet = h.submit("--", "true")
        for job in (told, owner, quiet):
            h.wait_state(job, "COMPLETED")
        h.wait_for(lambda: len(read_lines(ends)) >= 3, 15, "three lines in %s" % ends)
        me = pwd.getpwuid(os.getuid()).pw_name
        self.assertEqual(sorted(read_lines(ends)),
                         sorted(["%d [ada@example.org] [END,FAIL]" % told,
                                 "%d [%s] [ALL]" % (owner, me), "%d [] []" % quiet]))
        bad = h.gshare("submit", "--mail-type", "END,SOMETIMES", "--", "true")
        h.assert_error_line(bad, 2, "SOMETIMES")
        self.assertEqual(len(h.queue_jobs()), 3)


class NotifySystemTest(SystemDaemonCase):
    def setUp(self):
        if os.geteuid() != 0:
            self.skipTest("needs root (the system daemon)")

    def test_the_command_runs_as_the_jobs_owner(self):
        command = 'id -un > "$GSHARE_JOB_CWD/notified-$GSHARE_JOB_ID"'
        self.setup_system(["gsnotify1"], '[notify]\ncommand = \'%s\'\n' % command)
        self.start_system()
        user = self.users[0]
        job = self.submit(user, "--", "true")
        path = os.path.join(self.homes[user.pw_name], "notified-%d" % job)
        self.h.wait_for(lambda: os.path.exists(path) and read_lines(path), 20,
                        "%s written\n%s" % (path, self.log()))
        self.assertEqual(read_lines(path), [user.pw_name])
        self.assertEqual(os.stat(path).st_uid, user.pw_uid)


if __name__ == "__main__":
    unittest.main()
