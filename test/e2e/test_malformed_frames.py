"""Malformed frames on the daemon's socket: the daemon drops the offending connection and
keeps serving everyone else (status requests, the jobs that share the GPU meanwhile)."""
import json
import os
import re
import socket
import struct
import unittest

from gshare_e2e import TestCase

MAGIC = 0x52485347
_PROTOCOL_H = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "include",
                           "gshare", "protocol.h")
with open(_PROTOCOL_H) as _f:
    VERSION = int(re.search(r"kVersion = (\d+);", _f.read()).group(1))
HELLO, LEASE_REQUEST, LEASE_GRANT = 1, 2, 16
RUN_REGISTER, RUN_STARTED, RUN_ENDED, STATUS_REQUEST, REPLY = 32, 33, 34, 35, 48
SCHEDULER_SET, JOB_CONTROL, CLEAN, RUN_ATTACH = 36, 39, 40, 41
HELLO_SIZE, LEASE_SIZE = 32, 40


def header(type_, length, magic=MAGIC, version=VERSION, reserved=0):
    return struct.pack("<IHHII", magic, version, type_, length, reserved)


def frame(type_, payload):
    return header(type_, len(payload)) + payload


class MalformedFramesTest(TestCase):
    def setUp(self):
        self.h = self.harness()
        self.daemon = self.h.start_daemon()
        q = ["--quantum", "200ms"]
        self.a = self.h.start_fake(["--kernels", 50, "--kernel-ms", 25], q, name="a")
        self.b = self.h.start_fake(["--kernels", 50, "--kernel-ms", 25, "--route", "gpa"], q, name="b")

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect(self.h.socket)
        return s

    def read_reply(self, s):
        """One frame from the daemon, or None at EOF."""
        data = b""
        while len(data) < 16:
            chunk = s.recv(16 - len(data))
            if not chunk:
                return None
            data += chunk
        magic, version, type_, length, _ = struct.unpack("<IHHII", data)
        self.assertEqual((magic, version, type_), (MAGIC, VERSION, REPLY))
        body = b""
        while len(body) < length:
            chunk = s.recv(length - len(body))
            self.assertTrue(chunk, "reply cut short")
            body += chunk
        return json.loads(body)

    def assert_dropped(self, s, what):
        """The daemon closes the connection (maybe after an error reply)."""
        try:
            while True:
                data = s.recv(65536)
                if not data:
                    break
        except ConnectionResetError:
            pass
        except socket.timeout:
            self.fail("the daemon kept the connection after %s" % what)
        finally:
            s.close()

    def assert_serving(self, what):
        self.assertEqual(self.h.daemon_pid(), self.daemon, "the daemon was replaced after " + what)
        self.assertEqual(self.h.daemon_processes(), [self.daemon])

    def send_bad(self, what, data, error_reply=False):
        """A frame that cannot be parsed drops the connection; a well-framed request with bad
        content gets an error reply and the connection stays usable (issue 19)."""
        s = self.connect()
        try:
            s.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the daemon hung up before reading everything: fine
        if error_reply:
            reply = self.read_reply(s)
            self.assertIsNotNone(reply, what)
            self.assertFalse(reply["ok"], what)
            self.assertTrue(reply["error"], what)
            s.sendall(frame(STATUS_REQUEST, b"{}"))
            again = self.read_reply(s)
            self.assertIsNotNone(again, "the connection was dropped after " + what)
            self.assertTrue(again["ok"], what)
            s.close()
        else:
            self.assert_dropped(s, what)
        self.assert_serving(what)

    def test_malformed_frames(self):
        # Positive control: a well-formed status request over the raw socket gets a reply, so
        # the framing used below is right and the drops are the daemon's judgement.
        s = self.connect()
        s.sendall(frame(STATUS_REQUEST, b"{}"))
        reply = self.read_reply(s)
        self.assertTrue(reply["ok"])
        self.assertEqual(reply["daemon"]["pid"], self.daemon)
        s.close()

        hello = struct.pack("<QiI16s", 0, os.getpid(), 0, b"")
        cases = [
            ("bad magic", header(STATUS_REQUEST, 2, magic=0xDEADBEEF) + b"{}"),
            ("bad version", header(STATUS_REQUEST, 2, version=99) + b"{}"),
            ("unknown type", header(999, 2) + b"{}"),
            ("10 MiB length", header(STATUS_REQUEST, 10 * 1024 * 1024) + b"{" * 4096),
            ("zero-length JSON", header(STATUS_REQUEST, 0)),
            ("hello of wrong length", header(HELLO, HELLO_SIZE - 4) + hello[:HELLO_SIZE - 4]),
            ("hello too long", header(HELLO, HELLO_SIZE + 8) + hello + b"\0" * 8),
            ("lease request before hello", frame(LEASE_REQUEST, b"\0" * LEASE_SIZE)),
            ("daemon-to-shim type", frame(LEASE_GRANT, b"\0" * LEASE_SIZE)),
            ("reply type sent to the daemon", frame(REPLY, b"{}")),
            ("second hello", frame(HELLO, hello) + frame(HELLO, hello)),
            # Only a runner's own connection reports its start (src/daemon/server/request_router.cc).
            ("run start on a fresh connection", frame(RUN_STARTED, b'{"job_id": 1, "pid": 100}')),
            ("random garbage", b"\x00\xff" + os.urandom(4094)),
        ]
        for what, data in cases:
            with self.subTest(what):
                self.send_bad(what, data)
        json_cases = [
            ("JSON that does not parse", frame(STATUS_REQUEST, b"{not json")),
            ("JSON that is not an object", frame(STATUS_REQUEST, b"[1, 2]")),
            ("registration with wrong field types", frame(RUN_REGISTER, json.dumps(
                {"name": 5, "argv": "x", "cwd": "/", "priority": 0, "quantum_ms": 0, "gpu": ""}).encode())),
            ("registration with empty argv", frame(RUN_REGISTER, json.dumps(
                {"name": "x", "argv": [], "cwd": "/", "priority": 0, "quantum_ms": 0, "gpu": ""}).encode())),
            ("registration out of range", frame(RUN_REGISTER, json.dumps(
                {"name": "x", "argv": ["x"], "cwd": "/", "priority": 99999, "quantum_ms": 0, "gpu": ""}).encode())),
        ]
        # Every field of the wrong type or out of range, in each request that has it.
        bad_values = [True, "", 1.5, [], {}, 2 ** 63, -(2 ** 63), 2 ** 64 + 1, None]
        for type_, field, base in ((RUN_ENDED, "job_id", {"job_id": 1, "exit_code": 0}),
                                   (RUN_ENDED, "exit_code", {"job_id": 1, "exit_code": 0}),
                                   (RUN_ATTACH, "job_id", {"job_id": 1}),
                                   (STATUS_REQUEST, "job_id", {"job_id": 1}),
                                   (SCHEDULER_SET, "enabled", {"enabled": True}),
                                   (CLEAN, "older_than_ms", {"older_than_ms": 1}),
                                   (JOB_CONTROL, "ids", {"action": "hold", "ids": [1]}),
                                   (JOB_CONTROL, "priority", {"action": "set-priority", "ids": [1],
                                                              "priority": 1}),
                                   (JOB_CONTROL, "signal", {"action": "signal", "ids": [1], "signal": 1})):
            for value in bad_values:
                if (value is True and field == "enabled") or (value == [] and field == "ids"):
                    continue  # the valid values among them
                if value is None and (type_, field) in ((STATUS_REQUEST, "job_id"), (CLEAN, "older_than_ms"),
                                                        (RUN_ENDED, "exit_code")):
                    continue  # optional fields: null is absent
                body = dict(base)
                body[field] = value
                json_cases.append(("%s %s=%r" % (type_, field, value), frame(type_, json.dumps(body).encode())))
        for what, data in json_cases:
            with self.subTest(what):
                self.send_bad(what, data, error_reply=True)
        with self.subTest("end without a job"):
            # Any connection may report a job's end (a runner reconnecting after a daemon
            # restart), but only of a job that runs: the daemon answers with an error.
            self.send_bad("end without a job", frame(RUN_ENDED, b'{"job_id": 999999, "exit_code": 0, "signal": null}'),
                          error_reply=True)

        # Frames cut short by the peer closing: nothing to answer, the daemon goes on.
        for what, data in (("truncated header", header(STATUS_REQUEST, 2)[:7]),
                           ("truncated payload", header(STATUS_REQUEST, 50) + b'{"a":')):
            with self.subTest(what):
                s = self.connect()
                s.sendall(data)
                s.close()
                self.assert_serving(what)

        # Half a frame, then silence while others are served: the daemon must not block on us.
        stalled = self.connect()
        stalled.sendall(header(STATUS_REQUEST, 100) + b"{")
        self.assert_serving("a stalled half frame")

        h = self.h
        h.assert_done(self.a, 50)
        h.assert_done(self.b, 50)
        stalled.close()
        ka, kb = h.ops("K", self.a.child_pid()), h.ops("K", self.b.child_pid())
        self.assertEqual((len(ka), len(kb)), (50, 50))
        h.assert_exclusive(ka, kb, min_switches=2)
        self.assert_serving("all of the above")


if __name__ == "__main__":
    unittest.main()
