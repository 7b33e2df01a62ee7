"""Issue 19: one daemon per database. The single-instance lock lives beside the database and
the live daemon records its pid and socket there (<state_dir>/daemon.json), so a client whose
rules give another socket path (cron after logout: /tmp/gshare-UID instead of /run/user/UID)
reaches the daemon that serves its database instead of starting a second one on it, and a
second daemon started by hand refuses with exit 3, naming the first's pid and socket."""
import json
import os
import signal
import stat
import time
import unittest

from gshare_e2e import GSHARE, TestCase, _read, all_pids, proc_alive, proc_cmdline, proc_environ


class Issue19OneDaemonTest(TestCase):
    def daemons_of_state_dir(self, h):
        exe = os.path.realpath(GSHARE)
        out = []
        for p in all_pids():
            argv = proc_cmdline(p)
            if (len(argv) >= 3 and os.path.realpath(argv[0]) == exe and "daemon" in argv
                    and "--foreground" in argv and proc_alive(p)
                    and proc_environ(p).get("GSHARE_STATE_DIR") == h.state_dir):
                out.append(p)
        return sorted(out)

    def test_two_socket_paths_one_database(self):
        h = self.harness(queue={"max_running": 1, "gpus": 1})
        other_run = os.path.join(h.tmp, "run2")
        os.mkdir(other_run, 0o700)
        other = dict(h.env, XDG_RUNTIME_DIR=other_run)  # same state dir, another socket
        other_sock = os.path.join(other_run, "gshare", "gshare.sock")
        first = h.start_daemon()

        # A client with the other socket path reaches the live daemon.
        jid = h.submit("--", "true", env=other)
        self.assertEqual(h.wait_state(jid, "COMPLETED", env=other)["state"], "COMPLETED")
        r = h.gshare("status", "--json", env=other)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["daemon"]["pid"], first)
        self.assertFalse(os.path.exists(other_sock), "a second daemon was started")
        self.assertEqual(self.daemons_of_state_dir(h), [first])
        record_path = os.path.join(h.state_dir, "daemon.json")
        self.assertEqual(json.loads(_read(record_path)), {"pid": first, "socket": h.socket})
        self.assertEqual(stat.S_IMODE(os.stat(record_path).st_mode), 0o600)
        self.assertTrue(os.path.exists(os.path.join(h.state_dir, "gshare.db.lock")))

        # A second daemon by hand on the other socket refuses, naming the first.
        r = h.gshare("daemon", "--foreground", env=other, timeout=30)
        h.assert_error_line(r, 3, "another daemon (pid %d) serves %s on %s" % (
            first, os.path.join(h.state_dir, "gshare.db"), h.socket))
        self.assertEqual(self.daemons_of_state_dir(h), [first])
        self.assertIn(jid, h.queue_jobs())

        # The first dies (kill -9 leaves its record): the other socket's client starts the next
        # daemon, and the first socket's clients find that one through its record.
        os.kill(first, signal.SIGKILL)
        h.wait_for(lambda: not proc_alive(first), 30, "the daemon to die")
        second = h.submit("--", "true", env=other)
        self.assertTrue(os.path.exists(other_sock))
        rec = json.loads(_read(record_path))
        self.assertEqual(rec["socket"], other_sock)
        self.assertEqual(h.wait_state(second, "COMPLETED")["state"], "COMPLETED")
        self.assertEqual(h.daemon_pid(), rec["pid"])
        self.assertEqual(self.daemons_of_state_dir(h), [rec["pid"]])
        self.assertEqual(set(h.queue_jobs()), {jid, second})
        r = h.gshare("daemon", "stop")
        self.assertEqual(r.returncode, 0, r.stderr)
        h.wait_for(lambda: not proc_alive(rec["pid"]), 30, "the daemon to stop")
        self.assertFalse(os.path.exists(record_path), "a daemon that stops removes its record")

    def test_racing_clients_on_two_sockets_start_one_daemon(self):
        h = self.harness()
        envs = []
        for i in range(4):
            run = os.path.join(h.tmp, "run-%d" % i)
            os.mkdir(run, 0o700)
            envs.append(dict(h.env, XDG_RUNTIME_DIR=run))
        jobs = [h.start(h.gshare_argv("run", "--", "true"), name="r%d" % i, env=envs[i % 4])
                for i in range(8)]
        for j in jobs:
            self.assertEqual(j.wait(60), 0, j.stderr)
            self.assertNotIn("without GPU sharing", j.stderr)
        deadline = time.monotonic() + 10
        while len(self.daemons_of_state_dir(h)) > 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(len(self.daemons_of_state_dir(h)), 1)
        done = [j for j in h.queue_jobs(env=envs[0]).values() if j["argv"] == ["true"]]
        self.assertEqual(len(done), 8)


if __name__ == "__main__":
    unittest.main()
