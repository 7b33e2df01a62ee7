"""Shell completion generated from the CLI definitions (commands, options, and, issue 24 item 8,
job ids and states), and the systemd user unit."""
import os
import re
import subprocess
import unittest

from gshare_e2e import GSHARE, TestCase


class CliExtrasTest(TestCase):
    def complete(self, script, words, env=None):
        """Runs the bash completion function for `words` (the last one being completed)."""
        line = " ".join(words) + (' ""' if words[-1] == "" else "")
        prog = (script + "\nCOMP_WORDS=(%s); COMP_CWORD=%d; _gshare; printf '%%s\\n' \"${COMPREPLY[@]}\"\n"
                % (line, len(words) - 1))
        r = subprocess.run(["bash", "-c", prog], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=30, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        return set(r.stdout.split())

    def test_bash_completion_lists_commands_and_their_options(self):
        h = self.harness()
        r = h.gshare("completion", "bash", config=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.complete(r.stdout, ["gshare", "ru"]), {"run"})
        self.assertEqual(self.complete(r.stdout, ["gshare", "s"]),
                         {"status", "scheduler", "submit", "set-priority", "suspend", "slurm"})
        self.assertNotIn("job-supervisor", r.stdout)  # internal commands stay hidden
        self.assertNotIn("checkpoint-helper", r.stdout)
        self.assertIn("--quantum", self.complete(r.stdout, ["gshare", "run", "--q"]))
        self.assertIn("--priority", self.complete(r.stdout, ["gshare", "-v", "run", "--p"]))
        self.assertNotIn("--ready-fd", r.stdout)  # internal option stays hidden
        self.assertEqual(self.complete(r.stdout, ["gshare", "status", "--j"]), {"--json"})

    def test_bash_completion_offers_job_ids_and_states(self):
        h = self.harness()
        h.start_daemon()
        held = h.submit("-H", "-J", "sweep", "--", "true")
        done = h.submit("--", "true")
        h.wait_state(done, "COMPLETED")
        # The script calls `gshare` from PATH: one that uses this harness's config.
        bindir = os.path.join(h.tmp, "bin")
        os.makedirs(bindir)
        with open(os.path.join(bindir, "gshare"), "w") as f:
            f.write('#!/bin/sh\nexec %s --config %s "$@"\n' % (GSHARE, h.config_path))
        os.chmod(os.path.join(bindir, "gshare"), 0o755)
        env = dict(h.env, PATH=bindir + ":" + os.environ["PATH"])
        script = h.gshare("completion", "bash", config=False).stdout
        ids = {str(held), str(done)}
        # Steering a job offers the ones that have not ended; reading one offers every job.
        for command in ("cancel", "hold", "release", "update", "set-priority"):
            offered = self.complete(script, ["gshare", command, ""], env)
            self.assertIn(str(held), offered, command)
            self.assertNotIn(str(done), offered, command)
        for command in ("logs", "wait", "status", "requeue"):
            self.assertLessEqual(ids, self.complete(script, ["gshare", command, ""], env), command)
        self.assertNotIn(str(held), self.complete(script, ["gshare", "cancel", "--"], env))
        self.assertEqual(self.complete(script, ["gshare", "queue", "-t", ""], env),
                         {"PD", "R", "S", "CD", "F", "CA", "TO", "LO", "RQ"})
        self.assertNotIn("PD", self.complete(script, ["gshare", "submit", "-t", ""], env))
        fish = h.gshare("completion", "fish", config=False).stdout
        self.assertIn("__fish_seen_subcommand_from cancel' -a '(gshare queue --no-header "
                      "--format=jobid", fish)
        self.assertIn("__fish_seen_subcommand_from logs' -a '(gshare queue -a --no-header "
                      "--format=jobid", fish)

    def test_man_page_lists_every_command_and_option(self):
        h = self.harness()
        page = h.gshare("man", config=False)
        self.assertEqual((page.returncode, page.stderr), (0, ""))
        self.assertTrue(page.stdout.startswith(".TH GSHARE 1 "), page.stdout[:80])
        listed = h.gshare("--help", config=False).stdout
        for name in ("run", "submit", "queue", "acct", "top", "update", "cancel", "kernel"):
            self.assertIn("\n.SS %s\n" % name, page.stdout)
            self.assertIn(name, listed)
        self.assertIn("\\-\\-dependency", page.stdout)  # an option, escaped for roff
        self.assertIn(".SS queue\n", page.stdout)
        self.assertIn(".B queue pause\n", page.stdout)
        self.assertNotIn("job\\-supervisor", page.stdout)  # internal commands stay out
        env = page.stdout[page.stdout.index(".SH ENVIRONMENT\n"):page.stdout.index(".SH FILES\n")]
        for name in ("GSHARE_SOCKET", "GSHARE_DAEMON_TIMEOUT_MS", "GSHARE_JOB_ID",
                     "GSHARE_ARRAY_TASK_ID", "CUDA_VISIBLE_DEVICES"):
            self.assertIn(name, env)
        # Rendered as man does, with every warning on: none.
        groff = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z"], input=page.stdout,
                               capture_output=True, text=True)
        self.assertEqual((groff.returncode, groff.stderr), (0, ""))

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


    def test_status_says_when_it_left_older_jobs_out(self):
        h = self.harness(queue={"max_running": 8})
        h.start_daemon()
        ids = [h.submit("--", "true") for _ in range(21)]
        for i in ids:
            h.wait_state(i, "COMPLETED")
        r = h.gshare("status")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("older ended jobs left out: gshare queue -a lists every job", r.stdout)
        listed = [j["id"] for j in h.status()["jobs"]]
        self.assertEqual(sorted(listed), ids[1:], "the newest 20")
        self.assertTrue(h.status()["older_jobs_left_out"])
        h.gshare("clean")
        h.wait_state(h.submit("--", "true"), "COMPLETED")
        r = h.gshare("status")
        self.assertNotIn("left out", r.stdout)
        self.assertFalse(h.status()["older_jobs_left_out"])

    def test_durations_and_sizes_are_written_one_way(self):
        # docs/cli.md "Units": one word each, as a config file takes them; the old forms
        # were "27.7s" beside "1m28s", "64.0MiB" beside "512.0M" and "1.5 GiB".
        dur = re.compile(r"^(\d+ms|\d+(\.\d)?s|\d+m(\d\ds)?|\d+h(\d\dm)?|\d+d(\d\dh)?)$")
        size = re.compile(r"^\d+(\.\d)?(B|KiB|MiB|GiB|TiB)$")
        h = self.harness()
        h.start_daemon()
        job = h.start_fake(["--kernels", 400, "--kernel-ms", 10, "--sync-every", 1])
        jid = h.job_record(lambda j: j["state"] == "RUNNING")["id"]
        h.wait_for(lambda: h.status()["jobs"][0].get("lease_seconds", 0) > 0.2, 20, "lease time")
        text = h.gshare("status", str(jid)).stdout
        fields = dict(m.groups() for m in re.finditer(r"(\w+)=(\S*)", text))
        for key in ("RunTime", "Waited", "GPUTime", "LeaseWait"):
            self.assertRegex(fields.get(key, ""), dur, "%s in %s" % (key, text))
        for key in ("PeakMem", "MemAlloc", "Resident", "Swapped", "Moved"):
            self.assertRegex(fields.get(key, ""), size, "%s in %s" % (key, text))
        table = h.gshare("status").stdout
        top = h.gshare("top", "-b", "-n", "1", "-w", "200").stdout
        for out in (table, top):
            self.assertNotRegex(out, r"\d\.\d[KMGT]\b|\d (B|KiB|MiB|GiB)\b|\d\.\d\ds\b", out)
        row = next(l for l in table.splitlines() if l.split()[:1] == [str(jid)])
        self.assertTrue(any(dur.match(w) for w in row.split()), row)
        job.wait()

if __name__ == "__main__":
    unittest.main()
