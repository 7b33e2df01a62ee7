"""Bad input and hostile conditions for the batch queue (docs/cli.md "Exit status"): usage
errors exit 2, other errors 1, each with exactly one line "gshare: ..." on stderr and nothing
on stdout; a state directory that cannot be written and a full disk (a file size limit on the
daemon) fail submissions cleanly, the daemon keeps serving, and the queue stays intact."""
import json
import os
import resource
import shutil
import socket
import subprocess
import tempfile
import unittest

from gshare_e2e import GSHARE, MARKER, TestCase, _read

QUEUE = {"max_running": 1, "gpus": 1}
NOBODY = 65534


class QueueBadInputTest(TestCase):
    def setUp(self):
        self.h = self.harness(queue=QUEUE)

    def write(self, name, text):
        p = os.path.join(self.h.tmp, name)
        with open(p, "w") as f:
            f.write(text)
        return p

    # ---- usage errors: 2 --------------------------------------------------------------
    def test_unknown_option(self):
        h = self.h
        for args in (["submit", "--bogus", "--", "true"], ["submit", "-Z", "--", "true"],
                     ["queue", "--bogus"], ["cancel", "--bogus", "1"], ["wait", "--bogus", "1"],
                     ["logs", "--bogus", "1"], ["clean", "--bogus"], ["hold", "--bogus", "1"],
                     ["requeue", "--bogus", "1"], ["set-priority", "--bogus", "1", "2"]):
            with self.subTest(args=args):
                h.assert_error_line(h.gshare(*args), 2)
        self.assertEqual(h.queue_jobs(), {})

    def test_bad_durations_and_times(self):
        h = self.h
        for opts in (["-t", "5x"], ["-t", "1:2:3:4"], ["--time", "-3"],
                     ["--begin", "nowx"], ["--begin", "now+"], ["--begin", "25:00"],
                     ["--begin", "2026-13-40"], ["--kill-after", "abc"], ["--kill-after", "1y"],
                     ["--quantum", "0"], ["-p", "5000"], ["--env", "NOEQUALS"],
                     ["--memory", "bogus"], ["--memory", "ckpt"]):
            with self.subTest(opts=opts):
                h.assert_error_line(h.gshare("submit", *opts, "--", "true"), 2)
        h.assert_error_line(h.gshare("clean", "--older-than", "later"), 2)
        h.assert_error_line(h.gshare("queue", "-t", "XX"), 2)
        self.assertEqual(h.queue_jobs(), {}, "a refused submission must leave no job")

    def test_missing_command(self):
        h = self.h
        for args in (["submit"], ["submit", "--"], ["submit", "-J", "x"], ["submit", "-p", "3", "--"]):
            with self.subTest(args=args):
                h.assert_error_line(h.gshare(*args), 2, "command")
        self.assertEqual(h.queue_jobs(), {})

    def test_bad_dependency_syntax(self):
        h = self.h
        for dep in ("afterfoo:1", "afterok:", "afterok:x", "afterok:1?afterok:2", "afterok:0", ","):
            with self.subTest(dep=dep):
                h.assert_error_line(h.gshare("submit", "-d", dep, "--", "true"), 2)
        h.assert_error_line(h.gshare("submit", "--after", "1,,2", "--", "true"), 2)

    def test_bad_directives(self):
        h = self.h
        scripts = {
            "unknown option": "#!/bin/sh\n#GSHARE --bogus\necho hi\n",
            "unterminated quote": "#!/bin/sh\n#GSHARE -J \"abc\necho hi\n",
            "bad time": "#!/bin/sh\n#GSHARE -t xx\necho hi\n",
            "bad priority": "#!/bin/sh\n#GSHARE -p 99999\necho hi\n",
            "stray argument": "#!/bin/sh\n#GSHARE -J a b\necho hi\n",
        }
        for what, text in scripts.items():
            with self.subTest(what=what):
                path = self.write("bad.sh", text)
                h.assert_error_line(h.gshare("submit", "--script", path), 2)
        self.assertEqual(h.queue_jobs(), {})

    # ---- other errors: 1 --------------------------------------------------------------
    def test_unreadable_script(self):
        h = self.h
        missing = os.path.join(h.tmp, "no-such-script.sh")
        h.assert_error_line(h.gshare("submit", "--script", missing), 1, "no-such-script.sh")
        if os.geteuid() != 0:  # root reads it anyway
            path = self.write("secret.sh", "#!/bin/sh\necho hi\n")
            os.chmod(path, 0)
            h.assert_error_line(h.gshare("submit", "--script", path), 1, "secret.sh")
        self.assertEqual(h.queue_jobs(), {})

    def test_script_is_a_directory(self):
        h = self.h
        d = os.path.join(h.tmp, "a-directory")
        os.mkdir(d)
        h.assert_error_line(h.gshare("submit", "--script", d), 1, "a-directory")

    def test_unknown_jobs(self):
        h = self.h
        for args in (["wait", "4242"], ["logs", "4242"], ["logs", "-f", "4242"], ["hold", "4242"],
                     ["release", "4242"], ["requeue", "4242"], ["set-priority", "4242", "3"],
                     ["status", "4242"]):
            with self.subTest(args=args):
                h.assert_error_line(h.gshare(*args), 1, "4242")

    def test_hostile_job_ids_are_usage_errors(self):
        """A job id is 1 to 2^63-1 in decimal digits: "-1" is not sent to the daemon (whose
        refusal was wire text, exit 1), nor is a number past 2^63-1 clamped to that id."""
        h = self.h
        huge = "99999999999999999999"
        for args in (["cancel", "-1"], ["cancel", "0"], ["cancel", huge], ["cancel", "12", "-3"],
                     ["hold", "0x10"], ["wait", "-1"], ["logs", huge], ["status", huge],
                     ["set-priority", huge, "3"], ["update", "-1", "-J", "x"],
                     ["acct", "-j", huge], ["timeline", "-j", "-1"]):
            with self.subTest(args=args):
                h.assert_error_line(h.gshare(*args), 2, "bad job id")
        # A job's name typed where its id goes (scancel's habit is -n NAME): the line says so.
        r = h.gshare("cancel", "train")
        h.assert_error_line(r, 2, 'bad job id "train"')
        self.assertIn("; jobs by name: -n train", r.stderr)
        self.assertNotIn("-n train", h.gshare("logs", "train").stderr)  # logs takes no -n

    def test_submit_refuses_what_the_job_could_never_use(self):
        """Checked at submission, as the user the job runs as: a working directory that does
        not exist, an output file in a directory that does not exist or cannot."""
        h = self.h
        h.assert_error_line(h.gshare("submit", "-D", "/nonexistent", "--", "true"), 1,
                            "--chdir: directory /nonexistent does not exist")
        h.assert_error_line(h.gshare("submit", "-o", "/proc/nope/%j.out", "--", "true"), 1,
                            "directory /proc/nope does not exist")
        h.assert_error_line(h.gshare("submit", "-o", "missing-dir/out.log", "--", "true"), 1,
                            "missing-dir does not exist")
        self.assertEqual(h.queue_jobs(), {}, "a refused submission must leave no job")
        h.submit("-o", "%x-%j.out", "--", "true")

    def test_empty_database_file_is_refused_not_emptied(self):
        """A 0-byte or foreign file where the database belongs stops the daemon with one
        clear line; it is left as it was, never made an empty queue."""
        h = self.h
        os.makedirs(h.state_dir, mode=0o700, exist_ok=True)
        db = os.path.join(h.state_dir, "gshare.db")
        for content in (b"", b"id,name\n1,train\n"):
            with self.subTest(content=content):
                with open(os.open(db, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:
                    f.write(content)
                r = h.gshare("daemon", "--foreground", timeout=20)
                self.assertEqual(r.returncode, 1, r.stderr)
                self.assertIn("job store %s: not a database" % db, r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                with open(db, "rb") as f:
                    self.assertEqual(f.read(), content)
        os.unlink(db)
        h.submit("--", "true")  # a missing file is a fresh queue

    # ---- a state directory that cannot be written ---------------------------------------
    def nobody_env(self):
        """An installation of its own for uid 65534 (root ignores permissions, so the test
        runs gshare as nobody when it is root; as itself otherwise): returns (base, env,
        preexec_fn)."""
        base = tempfile.mkdtemp(prefix="gshare-nobody-", dir="/tmp")
        self.addCleanup(shutil.rmtree, base, True)
        os.chmod(base, 0o755)
        for d in ("run", "state", "home"):
            os.mkdir(os.path.join(base, d), 0o700)
        with open(os.path.join(base, "gshare.toml"), "w") as f:
            f.write("[queue]\nmax_running = 1\ngpus = 1\n")
        os.chmod(os.path.join(base, "gshare.toml"), 0o644)
        env = {"PATH": "/usr/bin:/bin", "HOME": os.path.join(base, "home"),
               "XDG_RUNTIME_DIR": os.path.join(base, "run"), "XDG_CONFIG_HOME": os.path.join(base, "home"),
               "GSHARE_STATE_DIR": os.path.join(base, "state"), MARKER: self.h.tmp}
        preexec = None
        if os.geteuid() == 0:
            for root, dirs, files in os.walk(base):
                for n in [root] + [os.path.join(root, x) for x in dirs + files]:
                    os.chown(n, NOBODY, NOBODY)

            def preexec():
                os.setgroups([])
                os.setgid(NOBODY)
                os.setuid(NOBODY)
            r = subprocess.run([GSHARE, "--version"], preexec_fn=preexec, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if r.returncode != 0:
                self.skipTest("uid %d cannot run %s: %s" % (NOBODY, GSHARE, r.stdout.strip()))
        return base, env, preexec

    def test_state_dir_read_only(self):
        base, env, preexec = self.nobody_env()
        state = os.path.join(base, "state")

        def g(*args):
            return subprocess.run([GSHARE, "--config", os.path.join(base, "gshare.toml")] + list(args),
                                  env=env, preexec_fn=preexec, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  timeout=60, cwd=base)
        self.addCleanup(lambda: g("daemon", "stop"))

        # Empty and read-only: no daemon log, no database.
        os.chmod(state, 0o555)
        self.h.assert_error_line(g("submit", "--", "true"), 1)
        self.h.assert_error_line(g("queue"), 1)
        os.chmod(state, 0o700)

        # A database with one job, then the directory and the database made read-only.
        r = g("submit", "-H", "-J", "before", "--", "true")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        first = int(r.stdout)
        r = g("daemon", "stop")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.h.wait_for(lambda: not os.path.exists(os.path.join(base, "run", "gshare", "gshare.sock")),
                        30, "the daemon to stop")
        for n in os.listdir(state):
            if n != "daemon.log" and os.path.isfile(os.path.join(state, n)):
                os.chmod(os.path.join(state, n), 0o444)
        os.chmod(state, 0o555)
        r = g("submit", "--", "true")
        self.h.assert_error_line(r, 1)
        os.chmod(state, 0o700)
        for n in os.listdir(state):
            if os.path.isfile(os.path.join(state, n)):
                os.chmod(os.path.join(state, n), 0o600)
        r = g("queue", "-a", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        jobs = json.loads(r.stdout)["jobs"]
        self.assertEqual([(j["id"], j["name"], j["state"]) for j in jobs], [(first, "before", "PENDING")])

    # ---- a full disk ----------------------------------------------------------------------
    def start_limited_daemon(self, limit):
        """`gshare daemon --foreground` with RLIMIT_FSIZE = limit bytes; returns its Popen once
        it accepts connections."""
        h = self.h

        def preexec():
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        log = open(os.path.join(h.tmp, "limited-daemon.log"), "wb")
        self.addCleanup(log.close)
        proc = subprocess.Popen(h.gshare_argv("daemon", "--foreground"), env=h.env, preexec_fn=preexec,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, cwd=h.tmp)

        def stop():
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        self.addCleanup(stop)

        def accepting():
            if proc.poll() is not None:
                raise AssertionError("the limited daemon exited %s: %s" % (
                    proc.returncode, _read(os.path.join(h.tmp, "limited-daemon.log"))))
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(h.socket)
                return True
            except OSError:
                return False
            finally:
                s.close()
        h.wait_for(accepting, 30, "the limited daemon to accept connections")
        return proc

    def fill_disk(self):
        """Queues 3 jobs, then restarts the daemon under a file size limit a little above its
        database and submits until a submission fails. Returns (daemon Popen, ids queued,
        the failed CompletedProcess)."""
        h = self.h
        ids = [h.submit("-H", "-J", "before%d" % i, "--", "true") for i in range(3)]
        r = h.gshare("daemon", "stop")
        self.assertEqual(r.returncode, 0, r.stderr)
        h.wait_for(lambda: not h.daemon_processes(), 30, "the daemon to stop")
        biggest = max(os.path.getsize(os.path.join(h.state_dir, n)) for n in os.listdir(h.state_dir)
                      if os.path.isfile(os.path.join(h.state_dir, n)))
        daemon = self.start_limited_daemon(biggest + 128 * 1024)
        for i in range(500):
            r = h.gshare("submit", "-H", "-J", "fill%d" % i, "--", "true")
            if r.returncode != 0:
                return daemon, ids, r
            self.assertRegex(r.stdout, r"\A[0-9]+\n\Z")
            ids.append(int(r.stdout))
        self.fail("500 submissions fit under the file size limit: nothing tested")

    def test_full_disk(self):
        h = self.h
        daemon, ids, failed = self.fill_disk()
        h.assert_error_line(failed, 1)
        # The daemon keeps serving: later submissions fail the same way, reads work.
        h.assert_error_line(h.gshare("submit", "-H", "--", "true"), 1)
        self.assertIsNone(daemon.poll(), "the daemon died of the full disk")
        self.assertEqual(h.daemon_pid(), daemon.pid)
        q = h.queue_jobs()
        self.assertEqual(list(sorted(q)), sorted(ids))
        self.assertIsNone(daemon.poll())
        # Restarted without the limit: every job submitted before is still queued.
        r = h.gshare("daemon", "stop")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(daemon.wait(30), 0)
        q = h.queue_jobs()  # starts a daemon without the limit
        self.assertNotEqual(h.daemon_pid(), daemon.pid)
        self.assertEqual(sorted(q), sorted(ids), "queue not intact")
        self.assertTrue(all(j["state"] == "PENDING" and j["held"] for j in q.values()))
        new = h.submit("--", "true")
        self.assertNotIn(new, ids)
        r = h.gshare("release", *map(str, ids))
        self.assertEqual(r.returncode, 0, r.stderr)
        r = h.gshare("wait", str(new), *map(str, ids), timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr + h.diagnostics())

    def test_full_disk_cancel_is_not_lost(self):
        h = self.h
        daemon, ids, _ = self.fill_disk()
        victim = ids[0]
        r = h.gshare("cancel", str(victim))
        h.gshare("daemon", "stop")
        daemon.wait(30)
        state = h.queue_jobs()[victim]["state"]  # a daemon without the limit
        if r.returncode == 0:
            self.assertEqual(state, "CANCELLED", "cancel exited 0 but the job is %s after a restart" % state)
        else:
            h.assert_error_line(r, 1)
            self.assertEqual(state, "PENDING")


if __name__ == "__main__":
    unittest.main()
