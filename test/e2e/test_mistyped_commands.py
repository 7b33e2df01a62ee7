"""What a mistyped command line gets (docs/cli.md "Mistakes"): one line naming the word gshare
did not know and the nearest command or option, exit 2; a bare `gshare` and `gshare help` print
the help; `gshare help CMD` is `gshare CMD --help`. No daemon is needed or started for them.
Also what a newcomer's first other words get: `daemon status`, `run` without a command, and an
error of `update -p` named after `update`."""
import unittest

from gshare_e2e import TestCase


class MistypedCommandsTest(TestCase):
    def test_a_mistyped_command_names_the_nearest(self):
        h = self.harness()
        for typed, meant in (("stauts", "status"), ("qeue", "queue"), ("sumbit", "submit"),
                             ("cancle", "cancel"), ("timelin", "timeline")):
            r = h.gshare(typed)
            h.assert_error_line(r, 2, "'%s' is not a gshare command; did you mean '%s'?"
                                % (typed, meant))
        r = h.gshare("frobnicate", "12")
        h.assert_error_line(r, 2, "'frobnicate' is not a gshare command (gshare --help")
        self.assertNotIn("did you mean", r.stderr)
        # After the top-level options, as typed: --config's value is not the command word.
        r = h.gshare("-v", "qeue", "-a")
        h.assert_error_line(r, 2, "did you mean 'queue'?")

    def test_a_mistyped_option_names_the_nearest(self):
        h = self.harness()
        r = h.gshare("--hepl", config=False)
        h.assert_error_line(r, 2, "unknown option --hepl; did you mean --help?")
        r = h.gshare("--verison", config=False)
        h.assert_error_line(r, 2, "did you mean --version?")

    def test_help_without_a_command(self):
        h = self.harness()
        for args in ((), ("help",)):
            r = h.gshare(*args, config=False)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stderr, "")
            self.assertIn("Examples:", r.stdout)
            self.assertIn("submit", r.stdout)
            self.assertNotIn("A subcommand is required", r.stdout + r.stderr)
        r = h.gshare("help", "queue", config=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("List pending and running jobs", r.stdout)
        self.assertEqual(r.stdout, h.gshare("queue", "--help", config=False).stdout)
        self.assertNotIn("gshare.sock", r.stdout + r.stderr)  # nothing asked a daemon


    def test_daemon_status(self):
        h = self.harness()
        r = h.gshare("daemon", "status")
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("no user daemon answers at " + h.socket, r.stdout)
        pid = h.start_daemon()
        r = h.gshare("daemon", "status")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("user daemon %d (gshare " % pid, r.stdout)
        self.assertIn("serving " + h.socket, r.stdout)
        self.assertIn("jobs: 0 running, 0 pending, 0 suspended; scheduler on, queue running",
                      r.stdout)

    def test_first_mistakes_name_the_command_typed(self):
        h = self.harness()
        h.start_daemon()
        h.assert_error_line(h.gshare("update", "999", "-p", "3"), 1, "update: no job 999")
        r = h.gshare("run")
        h.assert_error_line(r, 125, "run: no command given (usage: gshare run")

if __name__ == "__main__":
    unittest.main()
