"""Forged frames on the system daemon: another user's frames, sent raw on the socket as that
Unix user (useradd), neither end A's job nor take the GPU from everyone. After a restart of the
daemon A's running job is re-adopted without its runner's connection; B's forged "run ended" for
it, with no token and with a made-up one, is refused and the job keeps running, while A's own
cancel still works. B's process that takes the lease and then sends a CLI request on the same
connection is dropped, and the lease goes with it: A's next job gets the GPU. Needs root (CI runs
as root)."""
import json
import os
import shutil
import socket
import struct
import subprocess
import textwrap
import time
import unittest

from gshare_e2e import FAKE_APP
from system_case import SystemDaemonCase

USERS = ("gshforgea", "gshforgeb")

# One raw client, run as a user: sends each step's frame on one connection, then reads reply
# frames until one of the step's `until` type arrives (0: reads none), printing each as a JSON
# line {"type", "payload"} (JSON text, or hex); {"type": null} when the daemon closed it.
# Payloads of types below 32 (the shim's binary messages) are given in hex, others as text.
RAW_CLIENT = textwrap.dedent("""\
    import json, socket, struct, sys
    MAGIC, VERSION = 0x52485347, %d
    def recv_exactly(s, n):
        data = b""
        while len(data) < n:
            chunk = s.recv(n - len(data))
            if not chunk:
                return None
            data += chunk
        return data
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(sys.argv[1])
    for t, payload, until in json.loads(sys.argv[2]):
        body = bytes.fromhex(payload) if t < 32 else payload.encode()
        s.sendall(struct.pack("<IHHII", MAGIC, VERSION, t, len(body), 0) + body)
        while until:
            head = recv_exactly(s, 16)
            if head is None:
                print(json.dumps({"type": None}), flush=True)
                sys.exit(0)
            _, _, got, n, _ = struct.unpack("<IHHII", head)
            data = recv_exactly(s, n) or b""
            try:
                text = data.decode()
            except UnicodeDecodeError:
                text = data.hex()
            print(json.dumps({"type": got, "payload": text}), flush=True)
            if got == until:
                break
""")

HELLO, LEASE_REQUEST, RUN_ENDED, STATUS = 1, 2, 34, 35
LEASE_GRANT, REPLY = 16, 48


def protocol_version():
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "include", "gshare",
                           "protocol.h")) as f:
        for line in f:
            if "kVersion =" in line:
                return int(line.split("=")[1].strip().rstrip(";"))
    raise AssertionError("no kVersion in protocol.h")


@unittest.skipUnless(os.geteuid() == 0, "needs root: it creates users and a system daemon")
@unittest.skipUnless(shutil.which("useradd") and shutil.which("runuser"), "needs useradd, runuser")
class ForgedFramesTest(SystemDaemonCase):
    def setUp(self):
        self.setup_system(USERS, '[scheduler]\nsharing = "exclusive"\nquantum = "2s"\n'
                          'drop_grace = "2s"\n[queue]\nmax_running = 4\n')
        self.a, self.b = self.users
        self.client = os.path.join(self.sys, "raw_client.py")
        with open(self.client, "w") as f:
            f.write(RAW_CLIENT % protocol_version())
        os.chmod(self.client, 0o755)

    def raw(self, user, steps):
        """Runs the raw client as `user` with `steps` ([type, payload, replies to read]); the
        replies it read, as dicts."""
        r = subprocess.run(["runuser", "-u", user.pw_name, "--", "python3", self.client,
                            self.socket, json.dumps(steps)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr + self.log())
        return [json.loads(line) for line in r.stdout.splitlines()]

    def state_of(self, job):
        r = self.as_user(self.a, "queue", "-a", "--json", check_rc=0)
        jobs = {j["id"]: j for j in json.loads(r.stdout)["jobs"]}
        return jobs[job]["state"] if job in jobs else None

    def wait_state(self, job, state, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.state_of(job) == state:
                return
            time.sleep(0.2)
        self.fail("job %d never %s (now %s)\n%s" % (job, state, self.state_of(job), self.log()))

    def test_a_forged_end_of_a_readopted_job_is_refused(self):
        self.start_system()
        # RUNNING comes before its supervisor attaches; the marker proves the job's own process
        # runs, so the supervisor attached to this daemon and goes with it.
        marker = os.path.join(self.homes[self.a.pw_name], "started")
        job = self.submit(self.a, "--", "sh", "-c", 'touch "$0" && exec sleep 300', marker)
        deadline = time.time() + 30
        while not os.path.exists(marker) and time.time() < deadline:
            time.sleep(0.1)
        self.assertTrue(os.path.exists(marker), self.log())
        self.wait_state(job, "RUNNING")
        self.stop_system()
        self.start_system()  # re-adopts the job: its supervisor's connection went with the daemon
        self.wait_state(job, "RUNNING")
        for token in (None, "00" * 16):
            request = {"job_id": job, "exit_code": 0, "signal": None, "timed_out": False}
            if token:
                request["token"] = token
            replies = self.raw(self.b, [[RUN_ENDED, json.dumps(request), REPLY]])
            self.assertEqual(len(replies), 1, replies)
            reply = json.loads(replies[0]["payload"])
            self.assertFalse(reply["ok"], reply)
            self.assertIn("permission denied", reply["error"])
            self.assertEqual(self.state_of(job), "RUNNING")
        self.as_user(self.a, "cancel", str(job), check_rc=0)
        self.wait_state(job, "CANCELLED")

    def test_a_lease_holder_that_turns_into_a_cli_loses_its_lease(self):
        self.start_system()
        gpu = b"FAKEGPU-00000000"  # the fake driver's device 0 (test/fake_cuda/physical_gpus.cc)
        hello = struct.pack("<QiI16s", 0, 0, 0, bytes(16)).hex()
        lease = (gpu + struct.pack("<QQIi", 0, 0, 0, 0)).hex()
        steps = [[HELLO, hello, 0], [LEASE_REQUEST, lease, LEASE_GRANT], [STATUS, "{}", REPLY]]
        replies = self.raw(self.b, steps)
        types = [r["type"] for r in replies]
        self.assertIn(LEASE_GRANT, types, replies)
        self.assertEqual(types[-1], None, "the daemon answered the CLI request: %s" % replies)
        # B's process is gone and held the lease: A's job must get the GPU.
        r = self.as_user(self.a, "run", "--", FAKE_APP, "--kernels", "2", "--kernel-ms", "10",
                         check_rc=0)
        self.assertIn("dropping connection", self.log())


if __name__ == "__main__":
    unittest.main()
