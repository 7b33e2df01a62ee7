"""Issue 27 row 5 and 7: peers that do not read, that send half frames, or that exhaust the
daemon's descriptors never stall it, grow it without bound, or make it spin.

- A client that sends status requests and never reads its replies is not read any further
  (back-pressure) and is dropped once its output has not moved for 10 s; meanwhile everyone
  else is served.
- 50 connections each with most of a 4 MiB frame: the daemon holds at most its input cap
  (64 MiB) of them and drops the rest; incomplete frames are dropped after 10 s.
- Descriptors exhausted (RLIMIT_NOFILE of 64 on the daemon, 100 connections): accept backs
  off instead of spinning, and the daemon serves again when connections close."""
import os
import resource
import socket
import struct
import time
import unittest

from gshare_e2e import TestCase, proc_cpu_seconds, proc_rss_kib

MAGIC = 0x52485347
STATUS_REQUEST = 35
HELLO, LEASE_REQUEST = 1, 2
_PROTOCOL_H = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "include",
                           "gshare", "protocol.h")
with open(_PROTOCOL_H) as _f:
    import re
    VERSION = int(re.search(r"kVersion = (\d+);", _f.read()).group(1))


def header(type_, length):
    return struct.pack("<IHHII", MAGIC, VERSION, type_, length, 0)


def closed_by_peer(s, timeout):
    """True when the daemon closes `s` within `timeout` (whatever it sent first is read)."""
    s.settimeout(timeout)
    try:
        while True:
            if not s.recv(1 << 20):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


class SlowPeersTest(TestCase):
    def connect(self, h):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect(h.socket)
        return s

    def test_a_client_that_does_not_read(self):
        h = self.harness()
        daemon = h.start_daemon()
        for _ in range(20):  # replies worth listing
            h.submit("--hold", "-J", "x" * 200, "--", "true")
        silent = self.connect(h)
        silent.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        silent.setblocking(False)
        request = header(STATUS_REQUEST, 2) + b"{}"
        sent = 0
        try:
            for _ in range(20000):
                silent.send(request)
                sent += 1
        except BlockingIOError:
            pass  # the daemon stopped reading us: back-pressure
        self.assertLess(sent, 20000, "the daemon kept reading a client that reads nothing")
        t0 = time.monotonic()
        self.assertEqual(h.daemon_pid(), daemon)  # others are served meanwhile
        self.assertEqual(h.gshare("queue").returncode, 0)
        with open(h.daemon_log) as f:
            self.assertNotIn("does not read", f.read(), "dropped before its deadline")
        time.sleep(max(0.0, 12 - (time.monotonic() - t0)))  # its deadline is 10 s; not a byte read
        with open(h.daemon_log) as f:
            self.assertIn("does not read", f.read())
        self.assertTrue(closed_by_peer(silent, 5), "a client that never reads was kept")
        self.assertEqual(h.daemon_pid(), daemon)

    def test_half_frames_are_bounded(self):
        h = self.harness()
        # A sanitized daemon (CI) would otherwise keep what it frees in ASan's quarantine
        # (256 MiB), which measures ASan, not the daemon.
        h.env["ASAN_OPTIONS"] = ":".join(filter(None, [h.env.get("ASAN_OPTIONS"), "quarantine_size_mb=0"]))
        daemon = h.start_daemon()
        base = proc_rss_kib(daemon)
        chunk = b"{" + b" " * (4 * 1024 * 1024 - 2)  # one byte short of the frame's end
        conns, refused = [], 0
        for _ in range(50):
            s = self.connect(h)
            try:
                s.sendall(header(STATUS_REQUEST, 4 * 1024 * 1024) + chunk)
            except (BrokenPipeError, ConnectionResetError, socket.timeout):
                refused += 1
            conns.append(s)
        time.sleep(0.5)
        grown = proc_rss_kib(daemon) - base
        self.assertLess(grown, 160 * 1024, "the daemon grew by %d KiB for 50 half frames" % grown)
        self.assertEqual(h.daemon_pid(), daemon)
        dropped = sum(1 for s in conns if closed_by_peer(s, 0.2))
        self.assertGreater(dropped + refused, 0, "50 x 4 MiB of half frames were all kept")
        # The rest go at the deadline for incomplete frames.
        self.assertTrue(all(closed_by_peer(s, 20) for s in conns), "half frames kept past 10 s")
        for s in conns:
            s.close()
        self.assertEqual(h.daemon_pid(), daemon)

    def test_made_up_gpus_are_bounded(self):
        # A shim that names a new GPU UUID in every lease request: past 256 GPUs it is
        # dropped; the daemon keeps a bounded number of GPUs and keeps serving.
        h = self.harness()
        daemon = h.start_daemon()
        s = self.connect(h)
        s.sendall(header(HELLO, 32) + struct.pack("<QiI16s", 0, os.getpid(), 0, b""))
        try:
            for i in range(400):
                uuid = struct.pack("<QQ", 0x5eed, i)
                s.sendall(header(LEASE_REQUEST, 40) + uuid + struct.pack("<QQIi", 0, 0, 0, 0))
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.assertTrue(closed_by_peer(s, 10), "a shim naming 400 GPUs was kept")
        self.assertLessEqual(len(h.status()["gpus"]), 256)
        self.assertEqual(h.daemon_pid(), daemon)
        with open(h.daemon_log) as f:
            self.assertIn("names more GPUs than a machine has", f.read())

    def test_descriptors_exhausted(self):
        h = self.harness()
        daemon = h.start_daemon()
        resource.prlimit(daemon, resource.RLIMIT_NOFILE, (64, 64))
        conns = []
        for _ in range(100):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.setblocking(False)
            try:
                s.connect(h.socket)
            except (BlockingIOError, ConnectionRefusedError, OSError):
                pass
            conns.append(s)
        time.sleep(0.5)
        before = proc_cpu_seconds(daemon)
        time.sleep(2)
        spent = proc_cpu_seconds(daemon) - before
        self.assertLess(spent, 0.5, "the daemon spun at %.0f %% CPU without descriptors" % (spent * 50))
        for s in conns:
            s.close()
        self.assertEqual(h.daemon_pid(), daemon)  # serving again
        with open(h.daemon_log) as f:
            self.assertIn("cannot accept connections", f.read())


if __name__ == "__main__":
    unittest.main()
