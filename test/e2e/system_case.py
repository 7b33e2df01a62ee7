"""The system daemon's test case: `gshare daemon --system` on private paths, and Unix users
made with useradd whose `gshare` runs in cron's bare environment (runuser, env -i)."""
import os
import subprocess

from gshare_e2e import FAKECUDA_DIR, GSHARE, MARKER, TestCase


def ensure_user(name):
    """Creates `name` (no home directory made, no login shell) unless it exists; its pwd entry."""
    import pwd
    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        return pwd.getpwnam(name)


class SystemDaemonCase(TestCase):
    """A `gshare daemon --system` on private paths and Unix users made with useradd (issue 21).
    Needs root and useradd/runuser (subclasses skip without them). setup_system() makes the
    users, their homes and the config; start_system() starts the daemon as root; as_user() runs
    `gshare` as a user in cron's bare environment (env -i with HOME and PATH, plus
    GSHARE_SYSTEM_SOCKET pointing at this test's socket)."""

    def setup_system(self, users, config, system=""):
        """Makes `users` (names) and a config whose [system] table (socket, state_dir, then
        `system`'s lines) this adds to `config`'s other tables; sets self.h, self.users (pwd
        entries), self.homes, self.socket, self.state, self.config."""
        self.h = h = self.harness()
        self.users = [ensure_user(u) for u in users]
        # The harness's directory is root's 0700: the users must reach the build's fake driver
        # log and their homes inside it.
        os.chmod(h.tmp, 0o755)
        open(h.log, "a").close()
        os.chmod(h.log, 0o666)
        self.sys = os.path.join(h.tmp, "system")
        os.makedirs(self.sys, 0o755)
        os.chmod(self.sys, 0o755)
        self.socket = os.path.join(self.sys, "run", "gshare.sock")
        self.state = os.path.join(self.sys, "state")
        self.config = os.path.join(self.sys, "gshare.toml")
        with open(self.config, "w") as f:
            f.write(config + '[system]\nsocket = "%s"\nstate_dir = "%s"\n' %
                    (self.socket, self.state) + system)
        self.homes = {}
        for u in self.users:
            home = os.path.join(h.tmp, "home-" + u.pw_name)
            os.makedirs(home, 0o700)
            os.chown(home, u.pw_uid, u.pw_gid)
            self.homes[u.pw_name] = home
        self.addCleanup(self.stop_system)

    def start_system(self):
        r = subprocess.run([GSHARE, "--config", self.config, "daemon", "start", "--system"],
                           env=self.h.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr + self.log())
        return r

    def stop_system(self):
        subprocess.run([GSHARE, "--config", self.config, "daemon", "stop", "--system"],
                       env=self.h.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=30)

    def shared_device_file(self):
        """An empty file every user may write, for FAKE_CUDA_DEVICE_FILE: the users' jobs then
        share one fake GPU's memory. Its path."""
        path = os.path.join(self.sys, "device")
        with open(path, "wb"):
            pass
        os.chmod(path, 0o666)
        return path

    def user_argv(self, user, *args, system=True, extra_env=None):
        """`gshare ARGS` as `user` in cron's bare environment (runuser, env -i), as an argv."""
        env = {
            "HOME": self.homes[user.pw_name],
            "PATH": "/usr/bin:/bin",
            MARKER: self.h.tmp,  # the harness's cleanup finds what this started
            "LD_LIBRARY_PATH": FAKECUDA_DIR,
            "FAKE_CUDA_LOG": self.h.log,
            "GSHARE_SYSTEM_SOCKET": self.socket if system else os.path.join(self.sys, "none.sock"),
        }
        env.update(extra_env or {})
        argv = ["runuser", "-u", user.pw_name, "--", "env", "-i"]
        return argv + ["%s=%s" % kv for kv in env.items()] + [GSHARE] + [str(a) for a in args]

    def start_as_user(self, user, *args, extra_env=None):
        """Starts `gshare ARGS` as `user` (user_argv) in the background, killed at cleanup if
        still running; the Popen (text stdout and stderr piped)."""
        p = subprocess.Popen(self.user_argv(user, *args, extra_env=extra_env),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             cwd=self.homes[user.pw_name])
        self.addCleanup(lambda: p.poll() is None and p.kill())
        return p

    def as_user(self, user, *args, system=True, extra_env=None, check_rc=None):
        """Runs `gshare ARGS` as `user` in cron's bare environment; the CompletedProcess."""
        argv = self.user_argv(user, *args, system=system, extra_env=extra_env)
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=60, cwd=self.homes[user.pw_name])
        if check_rc is not None:
            self.assertEqual(r.returncode, check_rc, "%s: %s\n%s" % (args, r.stderr, self.log()))
        return r

    def log(self):
        try:
            with open(os.path.join(self.state, "daemon.log")) as f:
                return "daemon.log:\n" + f.read()[-4000:]
        except OSError:
            return "(no daemon.log)"

    def submit(self, user, *args):
        r = self.as_user(user, "submit", *args, check_rc=0)
        return int(r.stdout.strip())
