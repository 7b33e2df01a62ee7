"""Issue 27: another local user cannot impersonate the daemon. With no XDG_RUNTIME_DIR and no
/run/user/UID (cron, su), the socket lives in /tmp/gshare-UID, a name anyone can take first.
User B makes /tmp/gshare-<A's uid> mode 0777 with a socket of its own listening there; A,
under cron's bare environment, submits a job with a secret in its environment: A gets one
clear error line, B gets no connection and no byte, and A's daemon refuses that directory.
Also: what the daemon creates is its owner's alone (state dir 0700, database files 0600),
a relative state_dir is refused, and a socket directory that is not the standard one is
never created. Needs root (useradd, setuid); skipped otherwise."""
import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import unittest

from gshare_e2e import FAKE_APP, FAKECUDA_DIR, GSHARE, SHIM, TestCase, _read

USERS = ("gshare-e2e-a", "gshare-e2e-b")
# The impostor runs as user B: an interpreter B may execute (not one under /root).
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

# User B's impostor: takes the directory and the socket, then counts what anyone sends it.
IMPOSTOR = r"""
import os, socket, sys
d = sys.argv[1]
os.mkdir(d)
os.chmod(d, 0o777)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(os.path.join(d, "gshare.sock"))
os.chmod(os.path.join(d, "gshare.sock"), 0o777)
s.listen(8)
print("listening", flush=True)
while True:
    c, _ = s.accept()
    c.settimeout(1.0)
    got = b""
    try:
        while True:
            b = c.recv(65536)
            if not b:
                break
            got += b
    except OSError:
        pass
    print("connection %d bytes %r" % (len(got), got[:200]), flush=True)
    c.close()
"""


def ensure_user(name):
    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "-M", "-N", "-s", "/bin/sh", name], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return pwd.getpwnam(name)


def as_user(pw):
    def preexec():
        os.setgroups([])
        os.setgid(pw.pw_gid)
        os.setuid(pw.pw_uid)
    return preexec


@unittest.skipUnless(os.geteuid() == 0 and shutil.which("useradd"), "needs root and useradd")
class Issue27SocketTrustTest(TestCase):
    def setUp(self):
        self.h = self.harness()
        self.a, self.b = (ensure_user(n) for n in USERS)
        if os.path.exists("/run/user/%d" % self.a.pw_uid):
            self.skipTest("/run/user/%d exists: the socket would not be in /tmp" % self.a.pw_uid)
        r = subprocess.run([GSHARE, "--version"], preexec_fn=as_user(self.a), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        if r.returncode != 0:
            self.skipTest("%s cannot run %s: %s" % (USERS[0], GSHARE, r.stdout))
        self.rundir = "/tmp/gshare-%d" % self.a.pw_uid
        shutil.rmtree(self.rundir, ignore_errors=True)
        self.addCleanup(shutil.rmtree, self.rundir, True)
        self.home = tempfile.mkdtemp(prefix="gshare-e2e-home-", dir="/tmp")
        os.chown(self.home, self.a.pw_uid, self.a.pw_gid)
        self.addCleanup(shutil.rmtree, self.home, True)

    def cron_gshare(self, *args, timeout=30):
        """gshare ARGS as user A under cron's environment (env -i HOME=... PATH=/usr/bin:/bin)."""
        env = {"HOME": self.home, "PATH": "/usr/bin:/bin"}
        try:
            return subprocess.run([GSHARE] + list(args), env=env, preexec_fn=as_user(self.a), cwd=self.home,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            self.fail("gshare %s as %s hung (%s): did it talk to the impostor?" % (args, USERS[0], e))

    def start_impostor(self):
        heard = os.path.join(self.h.tmp, "impostor.out")
        with open(heard, "w") as out:
            p = subprocess.Popen([PYTHON, "-c", IMPOSTOR, self.rundir], preexec_fn=as_user(self.b),
                                 stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

        def stop():
            p.kill()
            p.wait()
        self.addCleanup(stop)
        self.h.wait_for(lambda: "listening" in _read(heard) or p.poll() is not None, 30,
                        "the impostor to listen")
        self.assertIsNone(p.poll(), _read(heard))
        return heard

    def test_client_refuses_a_daemon_of_another_user(self):
        heard = self.start_impostor()
        sock = os.path.join(self.rundir, "gshare.sock")
        r = self.cron_gshare("submit", "--env", "API_TOKEN=x", "--", "true")
        time.sleep(1.5)  # the impostor reports a connection once it ends or after 1 s
        self.assertEqual(_read(heard), "listening\n", "user B received something")
        self.h.assert_error_line(r, 1, "refusing to use " + sock)
        self.assertIn("belongs to uid %d" % self.b.pw_uid, r.stderr)
        for args in (("queue",), ("status",), ("daemon", "stop")):
            r = self.cron_gshare(*args)
            self.assertNotEqual(r.returncode, 0, "gshare %s: %s" % (args, r.stdout))
            self.assertIn("refusing to use " + sock, r.stderr)
        # A's daemon, started by hand in that environment, refuses the directory too.
        r = self.cron_gshare("daemon", "--foreground")
        self.h.assert_error_line(r, 1, "runtime directory %s belongs to uid %d" % (self.rundir, self.b.pw_uid))
        time.sleep(1.5)
        self.assertEqual(_read(heard), "listening\n", "user B received something")
        self.assertTrue(os.path.exists(sock), "A's daemon must leave B's socket alone")

    def test_shim_refuses_a_daemon_of_another_user(self):
        # A job process of A preloaded outside gshare finds B's socket where A's daemon would
        # be: the shim sends B nothing (no hello with A's pid and job) and the job runs
        # unshared, with one warning.
        heard = self.start_impostor()
        log = os.path.join(self.home, "k.log")
        env = {"HOME": self.home, "PATH": "/usr/bin:/bin", "LD_PRELOAD": SHIM,
               "LD_LIBRARY_PATH": FAKECUDA_DIR, "FAKE_CUDA_LOG": log}
        r = subprocess.run([FAKE_APP, "--kernels", "3", "--kernel-ms", "1"], env=env,
                           preexec_fn=as_user(self.a), cwd=self.home, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("refusing the daemon socket", r.stderr)
        self.assertEqual(r.stderr.count("refusing the daemon socket"), 1, r.stderr)
        time.sleep(1.5)
        self.assertEqual(_read(heard), "listening\n", "user B received something")

    def test_own_runtime_dir_made_private(self):
        # A's own /tmp/gshare-UID left mode 0777 (an old umask, a careless script): clients
        # refuse it (anyone could have put a socket there), A's daemon makes it 0700 and
        # serves; the state directory and the database are A's alone.
        os.mkdir(self.rundir)
        os.chmod(self.rundir, 0o777)
        os.chown(self.rundir, self.a.pw_uid, self.a.pw_gid)
        r = self.cron_gshare("submit", "--", "true")
        self.h.assert_error_line(r, 1, "its directory is writable by others (mode 0777) (%s)" % self.rundir)
        daemon = subprocess.Popen([GSHARE, "daemon", "--foreground"], env={"HOME": self.home, "PATH": "/usr/bin:/bin"},
                                  preexec_fn=as_user(self.a), cwd=self.home, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: (daemon.poll() is None and daemon.kill(), daemon.stderr.close()))
        sock = os.path.join(self.rundir, "gshare.sock")
        self.h.wait_for(lambda: os.path.exists(sock) or daemon.poll() is not None, 30, "A's daemon to listen")
        self.assertIsNone(daemon.poll(), daemon.stderr.read() if daemon.poll() is not None else "")
        self.assertEqual(stat.S_IMODE(os.lstat(self.rundir).st_mode), 0o700)
        r = self.cron_gshare("submit", "--", "true")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        state = os.path.join(self.home, ".local", "state", "gshare")
        self.assertEqual(stat.S_IMODE(os.stat(state).st_mode), 0o700)
        for name in ("gshare.db", "gshare.db-wal", "gshare.db-shm", "daemon.json", "gshare.db.lock"):
            path = os.path.join(state, name)
            self.assertTrue(os.path.exists(path), name)
            self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600, name)
        self.assertEqual(self.cron_gshare("daemon", "stop").returncode, 0)
        self.assertEqual(daemon.wait(30), 0)


class Issue27PrivateStateTest(TestCase):
    def test_state_files_private_and_tightened(self):
        h = self.harness()
        # An existing state directory and database readable by all (older gshare, umask 022).
        os.makedirs(h.state_dir, 0o755)
        os.chmod(h.state_dir, 0o755)
        h.submit("--", "true")
        h.gshare("daemon", "stop")
        h.wait_for(lambda: not os.path.exists(h.socket), 30, "the daemon to stop")
        os.chmod(h.state_dir, 0o755)
        os.chmod(os.path.join(h.state_dir, "gshare.db"), 0o644)
        old = os.umask(0o022)
        try:
            h.submit("--", "true")
        finally:
            os.umask(old)
        self.assertEqual(stat.S_IMODE(os.stat(h.state_dir).st_mode), 0o700)
        self.assertEqual(stat.S_IMODE(os.stat(os.path.dirname(h.socket)).st_mode), 0o700)
        for name in ("gshare.db", "gshare.db-wal", "gshare.db-shm", "daemon.json"):
            path = os.path.join(h.state_dir, name)
            self.assertTrue(os.path.exists(path), name)
            self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600, name)
        self.assertIn("state directory %s was mode 0755; now 0700" % h.state_dir, _read(h.daemon_log))

    def test_jobs_keep_the_umask_the_daemon_started_with(self):
        # The daemon's umask 077 is its own: a job creates files as its shell would.
        h = self.harness()
        out = os.path.join(h.tmp, "made")
        old = os.umask(0o022)
        try:
            jid = h.submit("--", "sh", "-c", "umask > %s.umask; touch %s" % (out, out))
        finally:
            os.umask(old)
        self.assertEqual(h.gshare("wait", str(jid)).returncode, 0)
        self.assertEqual(_read(out + ".umask").strip(), "0022")

    def test_relative_paths_refused(self):
        h = self.harness()
        for key, value, problem in (("state_dir", "state", "must be an absolute path or start with ~/"),
                                    ("socket", "run/gshare.sock", "must be an absolute path")):
            conf = os.path.join(h.tmp, "rel-%s.toml" % key)
            with open(conf, "w") as f:
                f.write('[daemon]\n%s = "%s"\n' % (key, value))
            r = h.gshare("--config", conf, "submit", "--", "true", config=False)
            h.assert_error_line(r, 1, "daemon.%s: %s" % (key, problem))
            self.assertFalse(os.path.exists(h.state_dir))
        env = dict(h.env, GSHARE_STATE_DIR="rel/state")
        h.assert_error_line(h.gshare("queue", env=env), 1, "the state directory must be an absolute path")
        self.assertFalse(os.path.exists(os.path.join(h.tmp, "rel")))

    def test_socket_dir_not_created_unless_standard(self):
        h = self.harness()
        sock = os.path.join(h.tmp, "missing", "gshare.sock")
        conf = os.path.join(h.tmp, "sock.toml")
        with open(conf, "w") as f:
            f.write('[daemon]\nsocket = "%s"\n' % sock)
        r = h.gshare("--config", conf, "daemon", "--foreground", config=False, timeout=15)
        h.assert_error_line(r, 1, "its directory %s does not exist" % os.path.dirname(sock))
        self.assertFalse(os.path.exists(os.path.dirname(sock)))
        r = h.gshare("--config", conf, "submit", "--", "true", config=False)
        self.assertEqual(r.returncode, 1)
        self.assertFalse(os.path.exists(os.path.dirname(sock)))
        # The standard runtime directory ($XDG_RUNTIME_DIR/gshare) is made when missing.
        self.assertFalse(os.path.exists(os.path.dirname(h.socket)))
        h.start_daemon()
        self.assertEqual(stat.S_IMODE(os.stat(os.path.dirname(h.socket)).st_mode), 0o700)


if __name__ == "__main__":
    unittest.main()
