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
from test_mps_backend import FAKE_MPS

USERS = ("gshforgea", "gshforgeb")

# One raw client, run as a user: sends each step's frame on one connection, then reads reply
# frames until one of the step's `until` type arrives (0: reads none), printing each as a JSON
# line {"type", "payload"} (JSON text, or hex); {"type": null} when the daemon closed it.
# Payloads of types below 32 (the shim's binary messages) are given and printed in hex, others
# as text.
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
                text = data.hex() if got < 32 else data.decode()
            except UnicodeDecodeError:
                text = data.hex()
            print(json.dumps({"type": got, "payload": text}), flush=True)
            if got == until:
                break
""")

HELLO, LEASE_REQUEST, MPS_JOIN_QUERY, RUN_ENDED, STATUS = 1, 2, 9, 34, 35
LEASE_GRANT, MPS_JOIN, REPLY = 16, 28, 48
MIB = 1 << 20


def protocol_version():
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "include", "gshare",
                           "protocol.h")) as f:
        for line in f:
            if "kVersion =" in line:
                return int(line.split("=")[1].strip().rstrip(";"))
    raise AssertionError("no kVersion in protocol.h")


class RawFramesCase(SystemDaemonCase):
    """A system daemon, users A and B, and the raw client (RAW_CLIENT) for B's forged frames."""

    def setup_raw(self, users, config):
        self.setup_system(users, config)
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

    def queue_of(self, user):
        r = self.as_user(user, "queue", "-a", "--json", check_rc=0)
        return {j["id"]: j for j in json.loads(r.stdout)["jobs"]}

    def state_of(self, job):
        return self.queue_of(self.a).get(job, {}).get("state")

    def wait_state(self, job, state, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.state_of(job) == state:
                return
            time.sleep(0.2)
        self.fail("job %d never %s (now %s)\n%s" % (job, state, self.state_of(job), self.log()))


@unittest.skipUnless(os.geteuid() == 0, "needs root: it creates users and a system daemon")
@unittest.skipUnless(shutil.which("useradd") and shutil.which("runuser"), "needs useradd, runuser")
class ForgedFramesTest(RawFramesCase):
    def setUp(self):
        self.setup_raw(USERS, '[scheduler]\nsharing = "exclusive"\nquantum = "2s"\n'
                       'drop_grace = "2s"\n[queue]\nmax_running = 4\n')

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


@unittest.skipUnless(os.geteuid() == 0, "needs root: it creates users and a system daemon")
@unittest.skipUnless(shutil.which("useradd") and shutil.which("runuser"), "needs useradd, runuser")
class ForgedMpsJoinTest(RawFramesCase):
    """The MPS arrival query (kMpsJoinQuery: a process launched as a client of gshare's MPS server
    asks at its first cuInit whether to join it) moves a job out of MPS for good, so only the
    job's own processes may ask: B's query for A's job, with no token or a made-up one, is
    answered as for an unknown job and changes nothing, while A's own jobs decide at their
    arrival (a lower job arriving beside A's service that left no room runs outside)."""

    def setUp(self):
        self.setup_raw(("gshjoina", "gshjoinb"),
                       '[scheduler]\nsharing = "auto"\nquantum = "20s"\nstagger = false\n'
                       '[memory]\ncontext_reserve = "1MiB"\n[queue]\nmax_running = 4\n'
                       '[mps]\ncontrol = "%s"\njoin_free_percentage = 30\n'
                       'join_wait_seconds = 0\n' % FAKE_MPS)
        self.fake = {"FAKE_CUDA_DEVICE_FILE": self.shared_device_file(),
                     "FAKE_CUDA_MEM_BYTES": str(256 * MIB)}

    def run_a(self, *args):
        return self.as_user(self.a, "run", "-q", *args, extra_env=self.fake, check_rc=0)

    def test_another_user_cannot_move_a_job_out_of_mps(self):
        self.start_system()
        pipe = os.path.join(self.sys, "run", "mps", "0", "pipe")
        stop, go = os.path.join(self.sys, "stop-service"), os.path.join(self.sys, "go")
        service = self.start_as_user(
            self.a, "run", "-q", "-J", "service", "-p", "10", "--", FAKE_APP, "--kernels", "0",
            "--swap-check", 200 * MIB, "--pieces", "1", "--cycles", "2", "--gap-ms", "200",
            "--stop-file", stop, extra_env=self.fake)

        def holds():
            r = self.as_user(self.a, "status", "--json", check_rc=0)
            return any(j.get("name") == "service" and
                       j.get("memory", {}).get("resident", 0) >= 200 * MIB
                       for j in json.loads(r.stdout)["jobs"])
        self.h.wait_for(holds, 30, "the service's memory\n" + self.log())
        # A's own lower job arriving now runs outside, on the system daemon as on a user's.
        self.assertIn("fake_app: mps -\n", self.run_a("--", FAKE_APP, "--print-mps",
                                                        "--kernels", "1").stdout)
        # A's next one is launched as a client and waits before its first CUDA call.
        late = self.start_as_user(
            self.a, "run", "-q", "-J", "late", "--", "sh", "-c",
            'while [ ! -e "$0" ]; do sleep 0.05; done; exec "$1" --print-mps --kernels 1',
            go, FAKE_APP, extra_env=self.fake)
        job = self.h.wait_for(lambda: next((i for i, j in self.queue_of(self.a).items()
                                            if j["name"] == "late"), None), 30, "job late")
        self.wait_state(job, "RUNNING")
        for token in (bytes(16), os.urandom(16)):
            query = struct.pack("<Q16sII", job, token, 0, 0).hex()
            replies = self.raw(self.b, [[MPS_JOIN_QUERY, query, MPS_JOIN]])
            self.assertEqual([r["type"] for r in replies], [MPS_JOIN], replies)
            join, known, free = struct.unpack("<IIQ", bytes.fromhex(replies[0]["payload"]))
            self.assertEqual((join, known, free), (1, 0, 0), "B's query was taken as A's job's")
        outside = json.loads(self.as_user(self.a, "status", "--json", check_rc=0).stdout)
        self.assertNotIn(job, [o.get("job") for o in outside["daemon"]["mps"]["outside"]],
                         outside["daemon"]["mps"])
        # Room comes: the job's own process arrives and joins, as B's query did not decide it.
        with open(stop, "w"):
            pass
        self.assertEqual(service.wait(60), 0, self.log())
        with open(go, "w"):
            pass
        out, err = late.communicate(timeout=60)
        self.assertEqual(late.returncode, 0, err + self.log())
        self.assertIn("fake_app: mps %s\n" % pipe, out, self.log())


if __name__ == "__main__":
    unittest.main()
