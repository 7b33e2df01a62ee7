"""Issue 19: `gshare daemon install-service` writes a unit that survives `systemctl --user
restart gshare` without killing the batch jobs (KillMode=process) and that systemd starts
only once the daemon serves (Type=notify: READY=1 on $NOTIFY_SOCKET after the socket accepts,
STOPPING=1 on shutdown). Tested without systemd: the test owns the notification socket."""
import os
import socket
import subprocess
import time
import unittest

from gshare_e2e import TestCase, _read


class Issue19SystemdTest(TestCase):
    def test_unit_keeps_jobs_and_waits_for_ready(self):
        h = self.harness()
        r = h.gshare("daemon", "install-service")
        self.assertEqual(r.returncode, 0, r.stderr)
        unit = os.path.join(h.tmp, "config", "systemd", "user", "gshare.service")
        self.assertEqual(r.stdout.strip(), unit)
        lines = _read(unit).splitlines()
        for want in ("Type=notify", "KillMode=process", "Restart=on-failure", "RestartPreventExitStatus=3"):
            self.assertIn(want, lines)
        self.assertNotIn("Type=simple", lines)
        exec_line = [l for l in lines if l.startswith("ExecStart=")]
        self.assertEqual(len(exec_line), 1)
        self.assertIn("daemon --foreground", exec_line[0])

    def notify_roundtrip(self, h, address, bind_address):
        n = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.addCleanup(n.close)
        n.bind(bind_address)
        n.settimeout(30)
        daemon = subprocess.Popen(h.gshare_argv("daemon", "--foreground"), env=dict(h.env, NOTIFY_SOCKET=address),
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, start_new_session=True)
        self.addCleanup(lambda: daemon.poll() is None and daemon.kill())
        try:
            msg = n.recv(4096).decode()
        except socket.timeout:
            self.fail("no READY=1 within 30 s: %s" % (daemon.poll(),))
        # At READY=1 the daemon's socket already accepts.
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            c.connect(h.socket)
        except OSError as e:
            self.fail("READY=1 came before the socket accepted: %s" % e)
        finally:
            c.close()
        self.assertIn("READY=1", msg.split("\n"))
        self.assertIn("MAINPID=%d" % daemon.pid, msg.split("\n"))
        self.assertEqual(h.daemon_pid(), daemon.pid)
        r = h.gshare("daemon", "stop")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(n.recv(4096).decode().split("\n"), ["STOPPING=1"])
        self.assertEqual(daemon.wait(30), 0)

    def test_ready_after_the_socket_accepts(self):
        h = self.harness()
        path = os.path.join(h.tmp, "notify")
        self.notify_roundtrip(h, path, path)

    def test_ready_on_an_abstract_notify_socket(self):
        h = self.harness()
        name = "gshare-e2e-notify-%d-%d" % (os.getpid(), time.monotonic_ns())
        self.notify_roundtrip(h, "@" + name, "\0" + name)


if __name__ == "__main__":
    unittest.main()
