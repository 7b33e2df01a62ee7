"""The job options of `submit` and `run` as docs/cli.md documents them: batch scripts with
#GSHARE lines (read at submission, the command line winning), -o/-D/--env and their
placeholders, the output file's default and truncation, the environment snapshot of `submit`,
and the framework memory defaults (XLA_PYTHON_CLIENT_PREALLOCATE, TF_FORCE_GPU_ALLOW_GROWTH)
unless the job sets them."""
import json
import os
import pwd
import unittest

from gshare_e2e import _read
from queue_case import QueueCase


class JobOptionsTest(QueueCase):
    def test_framework_memory_defaults_unless_the_job_sets_them(self):
        h = self.h
        show = ["sh", "-c", "echo xla=$XLA_PYTHON_CLIENT_PREALLOCATE tf=$TF_FORCE_GPU_ALLOW_GROWTH"]
        r = h.gshare("run", "--", *show)
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "xla=false tf=true"), r.stderr)
        env = dict(h.env, XLA_PYTHON_CLIENT_PREALLOCATE="true")
        r = h.gshare("run", "--env", "TF_FORCE_GPU_ALLOW_GROWTH=false", "--", *show, env=env)
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "xla=true tf=false"), r.stderr)
        # Submitted: the environment snapshot decides, as for every other variable.
        a = h.submit("--", *show)
        b = h.submit("--", *show, env=env)
        self.assertEqual(self.wait_rc(a, b), 0)
        self.assertEqual(h.gshare("logs", str(a)).stdout.strip(), "xla=false tf=true")
        self.assertEqual(h.gshare("logs", str(b)).stdout.strip(), "xla=true tf=true")

    def test_script_directives(self):
        h = self.h
        script = self.path("job.py")
        with open(script, "w") as f:
            f.write("#!/usr/bin/env python3\n"
                    "#GSHARE -J scripted -p 7\n"
                    "# an ordinary comment\n"
                    "#GSHARE -o %x-%j.txt --env FROM_SCRIPT=yes\n"
                    "#GSHARE --env BOTH=script\n"
                    "import os, sys\n"
                    "#GSHARE -p 99\n"  # after the first command: not a directive
                    "print('argv', sys.argv[1:])\n"
                    "print('env', os.environ.get('FROM_SCRIPT'), os.environ.get('BOTH'))\n"
                    "print('version', 1)\n")
        a = h.submit("-H", "-p", "3", "--env", "BOTH=cli", "--script", script, "x y", "z")
        rec = self.state(a)
        self.assertEqual((rec["name"], rec["priority"]), ("scripted", 3), "the command line wins")
        # Read at submission: a later edit does not change the job.
        with open(script, "a") as f:
            f.write("print('version', 2)\n")
        h.gshare("release", str(a))
        self.assertEqual(self.wait_rc(a), 0)
        out = _read(self.path("scripted-%d.txt" % a))
        self.assertEqual(out, "argv ['x y', 'z']\nenv yes cli\nversion 1\n")

        # No #! line: /bin/sh runs it.
        plain = self.path("plain.sh")
        with open(plain, "w") as f:
            f.write("#GSHARE -J plain\necho \"sh $1\"\n")
        b = h.submit("-o", self.path("plain.out"), "--script", plain, "arg")
        self.assertEqual(self.wait_rc(b), 0)
        self.assertEqual(self.state(b)["name"], "plain")
        self.assertEqual(_read(self.path("plain.out")), "sh arg\n")

    def test_output_chdir_env(self):
        h = self.h
        work = self.path("work")
        os.mkdir(work)
        user = pwd.getpwuid(os.getuid()).pw_name
        # --env first: see test_env_option_last for --env right before "--".
        a = h.submit("--env", "K1=v1", "--env", "K2=a=b", "-J", "named", "-D", work,
                     "-o", "%x.%j.%u.%%.log", "--", "sh", "-c",
                     'pwd; echo "$K1 $K2 $GSHARE_JOB_ID $GSHARE_JOB_NAME"')
        self.assertEqual(self.wait_rc(a), 0)
        out = os.path.join(work, "named.%d.%s.%%.log" % (a, user))  # relative to -D
        self.assertEqual(_read(out), "%s\nv1 a=b %d named\n" % (work, a))
        self.assertEqual(self.state(a)["cwd"], work)
        r = h.gshare("status", str(a), "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertIn("schema_version", doc)
        self.assertEqual((doc["id"], doc["state"], doc["name"]), (a, "COMPLETED", "named"))
        r = h.gshare("queue", "-a")  # not a terminal: no colour
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("\033", r.stdout)
        self.assertEqual(r.stdout.splitlines()[0].split(), ["ID", "ST", "PRI", "NAME", "TIME", "GPU", "REASON"])
        self.assertEqual(r.stdout.splitlines()[1].split()[:4], [str(a), "CD", "0", "named"])
        # Default: the submitter's working directory, output under <state_dir>/logs.
        b = h.submit("--", "pwd", cwd=work)
        self.assertEqual(self.wait_rc(b), 0)
        self.assertEqual(_read(os.path.join(h.state_dir, "logs", "%d.out" % b)), work + "\n")
        self.assertEqual(self.state(b)["name"], "pwd")
        # The output file is truncated when the job starts.
        trunc = self.path("trunc.log")
        with open(trunc, "w") as f:
            f.write("old content that is long\n")
        c = h.submit("-o", trunc, "--", "echo", "new")
        self.assertEqual(self.wait_rc(c), 0)
        self.assertEqual(_read(trunc), "new\n")

    def test_env_option_last(self):
        h = self.h
        a = h.submit("--env", "K=v", "--", "sh", "-c", 'echo "$K"')
        self.assertEqual(self.wait_rc(a), 0)
        self.assertEqual(self.state(a)["argv"], ["sh", "-c", 'echo "$K"'])
        self.assertEqual(_read(os.path.join(h.state_dir, "logs", "%d.out" % a)), "v\n")

    def test_environment_snapshot(self):
        h = self.h
        daemon_env = dict(h.env, ONLY_IN_DAEMON="daemon")
        r = h.gshare("daemon", env=daemon_env)
        self.assertEqual(r.returncode, 0, r.stderr)
        submit_env = dict(h.env, SNAPSHOT_VAR="from submit", PATH=h.env["PATH"])
        a = h.submit("--", "sh", "-c", 'echo "[$SNAPSHOT_VAR] [$ONLY_IN_DAEMON] [$GSHARE_JOB_ID]"',
                     env=submit_env)
        self.assertEqual(self.wait_rc(a), 0)
        self.assertEqual(_read(os.path.join(h.state_dir, "logs", "%d.out" % a)),
                         "[from submit] [] [%d]\n" % a)


if __name__ == "__main__":
    unittest.main()
