"""Shell completion generated from the CLI definitions, and the systemd user unit."""
import os
import subprocess
import unittest

from gshare_e2e import GSHARE, TestCase


class CliExtrasTest(TestCase):
    def complete(self, script, words):
        """Runs the bash completion function for `words` (the last one being completed)."""
        line = " ".join(words)
        prog = (script + "\nCOMP_WORDS=(%s); COMP_CWORD=%d; _gshare; printf '%%s\\n' \"${COMPREPLY[@]}\"\n"
                % (line, len(words) - 1))
        r = subprocess.run(["bash", "-c", prog], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        return set(r.stdout.split())

    def test_bash_completion_lists_commands_and_their_options(self):
        h = self.harness()
        r = h.gshare("completion", "bash", config=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.complete(r.stdout, ["gshare", "ru"]), {"run"})
        self.assertEqual(self.complete(r.stdout, ["gshare", "s"]),
                         {"status", "scheduler", "submit", "set-priority", "suspend"})
        self.assertNotIn("job-supervisor", r.stdout)  # internal commands stay hidden
        self.assertNotIn("checkpoint-helper", r.stdout)
        self.assertIn("--quantum", self.complete(r.stdout, ["gshare", "run", "--q"]))
        self.assertIn("--priority", self.complete(r.stdout, ["gshare", "-v", "run", "--p"]))
        self.assertNotIn("--ready-fd", r.stdout)  # internal option stays hidden
        self.assertEqual(self.complete(r.stdout, ["gshare", "status", "--j"]), {"--json"})

    def test_fish_and_zsh_scripts(self):
        h = self.harness()
        fish = h.gshare("completion", "fish", config=False)
        self.assertEqual(fish.returncode, 0, fish.stderr)
        for sub in ("run", "status", "scheduler", "daemon", "completion"):
            self.assertIn("-a %s " % sub, fish.stdout)
        self.assertIn("__fish_seen_subcommand_from run' -s p -l priority", fish.stdout)
        zsh = h.gshare("completion", "zsh", config=False)
        self.assertEqual(zsh.returncode, 0, zsh.stderr)
        self.assertTrue(zsh.stdout.startswith("autoload -U +X bashcompinit"))
        self.assertEqual(h.gshare("completion", "tcsh", config=False).returncode, 2)

    def test_install_service_writes_a_user_unit(self):
        h = self.harness()
        r = h.gshare("daemon", "install-service")
        self.assertEqual(r.returncode, 0, r.stderr)
        unit = os.path.join(h.env["XDG_CONFIG_HOME"], "systemd", "user", "gshare.service")
        self.assertEqual(r.stdout.strip(), unit)
        with open(unit) as f:
            text = f.read()
        self.assertIn("ExecStart=%s daemon --foreground --config %s\n" % (
            os.path.realpath(GSHARE), h.config_path), text)
        self.assertIn("Type=notify", text)
        self.assertIn("WantedBy=default.target", text)


if __name__ == "__main__":
    unittest.main()
