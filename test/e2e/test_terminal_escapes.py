"""Issue 27 (row 9): `gshare queue` printed the ESC and newline characters of job names raw.
Tables escape control characters; --json keeps the exact text."""
import unittest

from gshare_e2e import TestCase

NAME = "evil\x1b[2J\nname\x07"


class TerminalEscapesTest(TestCase):
    def test_queue_and_status_tables_escape_control_characters(self):
        h = self.harness(queue={"max_running": 1, "gpus": 1})
        job = h.submit("--hold", "-J", NAME, "--", "sh", "-c", "echo\x1b[31m")
        self.assertEqual(h.queue_jobs()[job]["name"], NAME)  # --json: exact
        r = h.gshare("queue")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(len(lines), 2, r.stdout)  # header + one row: no newline from the name
        self.assertNotIn("\x1b", r.stdout)
        self.assertNotIn("\x07", r.stdout)
        self.assertIn("evil\\e[2J\\nname", lines[1])
        r = h.gshare("status")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("\x1b", r.stdout)
        self.assertNotIn("\x07", r.stdout)
        self.assertIn("echo\\e[31m", r.stdout)


if __name__ == "__main__":
    unittest.main()
