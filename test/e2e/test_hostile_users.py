"""A hostile user of the system daemon (docs/design.md "Connections"; docs/cli.md "Limits").
Two Unix users made with useradd against one `gshare daemon --system` that root started:

- B opens more connections than [limits] connections_per_user and holds them: those past the
  cap are closed at once, and B's refusals make one line of the daemon's log, not one each;
  meanwhile A's `gshare submit` succeeds within 1 s.
- B's connections that never sent a frame are closed 10 s after they connected; B's
  connections that said hello (a shim's, idle between leases) stay.
- B's one process saying hello on several connections is one job, not one per connection; a
  lease request naming a GPU this machine does not have (the daemon lists the fake NVML's)
  drops that connection and adds no GPU to the daemon's state.

And, with a user's own daemon: `gshare cancel` of more ids than one request may carry
(10,000) sends several requests, and every job named is cancelled.

The system daemon part needs root (CI runs as root)."""
import json
import os
import shutil
import subprocess
import sys
import time
import unittest

from gshare_e2e import FAKENVML_DIR, TestCase
from system_case import SystemDaemonCase

USERS = ("gshbounda", "gshboundb")
CAP = 32
SHIMS = 3
SILENT = CAP + 20  # past the cap with the shims' connections
# B's Python: the one running the tests may live where B cannot read it.
PYTHON = shutil.which("python3", path="/usr/bin:/bin") or sys.executable

_PROTOCOL_H = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "include",
                           "gshare", "protocol.h")
with open(_PROTOCOL_H) as _f:
    import re
    VERSION = int(re.search(r"kVersion = (\d+);", _f.read()).group(1))

# Runs as B: SHIMS connections that say hello (job 0: a process of its own), then SILENT that
# say nothing; answers one JSON line per command read from stdin.
HOLDER = r"""
import json, socket, struct, sys, time
path, shims, silent, version = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
MAGIC, HELLO, LEASE_REQUEST = 0x52485347, 1, 2
def frame(type_, payload):
    return struct.pack("<IHHII", MAGIC, version, type_, len(payload), 0) + payload
def dial():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s
def closed(s, wait=0.0):
    s.settimeout(wait if wait > 0 else None)
    try:
        data = s.recv(1 << 16, 0 if wait > 0 else socket.MSG_DONTWAIT)
        return data == b""
    except (BlockingIOError, socket.timeout):
        return False
    except OSError:
        return True
hellos = []
for _ in range(shims):
    s = dial()
    s.sendall(frame(HELLO, struct.pack("<QiI16s", 0, 0, 0, b"")))
    hellos.append(s)
quiet = [dial() for _ in range(silent)]
time.sleep(1.0)
def report(**extra):
    extra.update(quiet_open=sum(not closed(s) for s in quiet),
                 hellos_open=sum(not closed(s) for s in hellos))
    print(json.dumps(extra), flush=True)
report(connected_at=time.monotonic())
for line in sys.stdin:
    if line.strip() == "gpu":
        made_up = struct.pack("<QQ", 0x5eed, 0x5eed)
        hellos[-1].sendall(frame(LEASE_REQUEST, made_up + struct.pack("<QQIi", 0, 0, 0, 0)))
        report(gpu_dropped=closed(hellos[-1], 5.0))
    else:
        report(now=time.monotonic())
"""


@unittest.skipUnless(os.geteuid() == 0, "needs root: it creates users and a system daemon")
@unittest.skipUnless(shutil.which("useradd") and shutil.which("runuser"), "needs useradd, runuser")
class HostileUserTest(SystemDaemonCase):
    def setUp(self):
        self.setup_system(USERS, '[scheduler]\nsharing = "exclusive"\n[queue]\ngpus = 1\n'
                          '[limits]\nconnections_per_user = %d\n' % CAP)
        self.a, self.b = self.users
        # The daemon lists the fake driver's GPUs through the fake NVML.
        self.h.env["LD_LIBRARY_PATH"] = FAKENVML_DIR + ":" + self.h.env.get("LD_LIBRARY_PATH", "")

    def command(self, holder, line):
        holder.stdin.write(line + "\n")
        holder.stdin.flush()
        out = holder.stdout.readline()
        if not out:
            self.fail("the holder ended: " + holder.stderr.read())
        return json.loads(out)

    def test_one_user_cannot_lock_out_another(self):
        self.start_system()
        holder = subprocess.Popen(
            ["runuser", "-u", self.b.pw_name, "--", PYTHON, "-c", HOLDER, self.socket,
             str(SHIMS), str(SILENT), str(VERSION)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: (holder.kill(), holder.communicate(timeout=30)))
        first = json.loads(holder.stdout.readline() or "null") or self.fail(holder.stderr.read())
        # The cap counts the hellos' connections too: those past it were closed at once.
        self.assertEqual(first["hellos_open"], SHIMS, first)
        self.assertEqual(first["quiet_open"], CAP - SHIMS, first)

        t0 = time.monotonic()
        job = self.submit(self.a, "--hold", "--", "true")
        took = time.monotonic() - t0
        self.assertLess(took, 1.0, "A's submit took %.2f s while B held %d connections" %
                        (took, SHIMS + SILENT))
        self.assertGreater(job, 0)

        log = self.log()
        refusals = [l for l in log.splitlines() if "refused" in l and "uid %d" % self.b.pw_uid in l]
        self.assertEqual(len(refusals), 1, log)
        self.assertIn("at most %d per user" % CAP, refusals[0])

        # B's own requests wait for B's connections to close: the cap is B's alone.
        self.assertNotEqual(self.as_user(self.b, "queue").returncode, 0)
        # B's process said hello on SHIMS connections: one job of its own.
        status = json.loads(self.as_user(self.a, "queue", "-a", "--json", check_rc=0).stdout)
        mine = [j for j in status["jobs"] if j["uid"] == self.b.pw_uid and j["state"] == "RUNNING"]
        self.assertEqual(len(mine), 1, status)

        # A made-up GPU: B's connection is dropped and the daemon tracks no such GPU.
        gpu = self.command(holder, "gpu")
        self.assertTrue(gpu["gpu_dropped"], gpu)
        status = json.loads(self.as_user(self.a, "status", "--json", check_rc=0).stdout)
        self.assertEqual([g["uuid"] for g in status["gpus"]], [], status["gpus"])

        # 10 s after they connected, B's silent connections are closed; its hellos' are not.
        time.sleep(max(0.0, first["connected_at"] + 11.0 - time.monotonic()))
        later = self.command(holder, "count")
        self.assertEqual(later["quiet_open"], 0, later)
        self.assertEqual(later["hellos_open"], SHIMS - 1, later)  # less the made-up GPU's
        dropped = [l for l in self.log().splitlines() if "sent no request within 10 s" in l]
        self.assertTrue(dropped, self.log())
        self.assertLessEqual(len(dropped), 10, "one line per silent connection")
        self.assertEqual(self.as_user(self.a, "cancel", str(job)).returncode, 0)


class ControlBoundsTest(TestCase):
    def test_cancel_of_more_ids_than_one_request_carries(self):
        h = self.harness()
        h.start_daemon()
        jobs = [h.submit("--hold", "--", "true") for _ in range(2)]
        missing = list(range(10 ** 6, 10 ** 6 + 10050))
        r = h.gshare("cancel", *[str(i) for i in [jobs[0]] + missing + [jobs[1]]], timeout=120)
        self.assertEqual(r.returncode, 1, r.stderr[-2000:])  # the missing ids
        self.assertNotIn("too many job ids", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), len(missing), r.stderr[-2000:])
        for job in jobs:
            h.wait_state(job, ("CANCELLED",), timeout=30)


if __name__ == "__main__":
    unittest.main()
