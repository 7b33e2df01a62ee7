"""Fail open: a preloaded job whose daemon socket has no listener runs all of its kernels,
exits 0 and says once, on stderr, that it runs without GPU sharing."""
import os
import socket
import subprocess
import unittest

from gshare_e2e import SHIM, FAKE_APP, TestCase


class NoDaemonTest(TestCase):
    def run_unshared(self, h, sock, kernels, kernel_ms):
        env = dict(h.env, LD_PRELOAD=SHIM, GSHARE_SOCKET=sock)
        return subprocess.run([FAKE_APP, "--route", "dlsym", "--kernels", str(kernels),
                               "--kernel-ms", str(kernel_ms)],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=120, cwd=h.tmp)

    def check(self, h, sock, r, kernels):
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("fake_app: done %d" % kernels, r.stdout)
        self.assertEqual(len(h.ops("K")), kernels)
        lines = [l for l in r.stderr.splitlines() if "gshare:" in l]
        self.assertEqual(len(lines), 1, "stderr: %r" % r.stderr)
        self.assertIn("without GPU sharing", lines[0])
        self.assertIn(sock, lines[0])
        self.assertEqual(h.daemon_processes(), [], "the shim must not start a daemon")

    def test_no_socket_file(self):
        h = self.harness()
        sock = os.path.join(h.tmp, "nobody.sock")
        # 2.5 s of kernels: the shim's reconnect attempts (every 2 s) must stay quiet too.
        self.check(h, sock, self.run_unshared(h, sock, 50, 50), 50)

    def test_stale_socket_file(self):
        # A socket file whose listener is gone (a crashed daemon): connect gets ECONNREFUSED.
        h = self.harness()
        sock = os.path.join(h.tmp, "stale.sock")
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(sock)
        s.close()
        self.check(h, sock, self.run_unshared(h, sock, 10, 20), 10)


if __name__ == "__main__":
    unittest.main()
