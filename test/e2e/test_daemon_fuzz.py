"""Issue 19: the daemon against a storm of bad input on its socket: random bytes; frames cut
short, claiming 4 GiB, with a wrong magic, version or type; every JSON request with fields of
the wrong type (true, "", 1.5, [], {}, huge numbers, missing ones); shim messages with random
contents; and 500 idle connections held open meanwhile. Then the daemon must answer
`gshare status` as the same process, and the jobs queued before the storm must be unchanged.

Seeded: the seed is printed; GSHARE_FUZZ_SEED=N repeats a run, GSHARE_FUZZ_STORM_SECONDS sets
the storm's length (default 20). The storm runs in a worker process of its own: the daemon signals
the peers it serves (SIGSTOP past the drop grace, SIGKILL of a process it cannot restore), and
those must not be this test. A daemon that dies is started again and the storm goes on; the
test then fails naming each crash, with the cases sent just before it."""
import json
import os
import random
import re
import resource
import signal
import socket
import struct
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "..", "..", "include", "gshare", "protocol.h")) as _f:
    VERSION = int(re.search(r"kVersion = (\d+);", _f.read()).group(1))
MAGIC = 0x52485347
HELLO, LEASE_REQUEST, LEASE_RELEASED, MEM_REPORT, GAP_REPORT = 1, 2, 3, 4, 5
SHIM_SIZES = {HELLO: 32, LEASE_REQUEST: 40, LEASE_RELEASED: 40, MEM_REPORT: 152, GAP_REPORT: 40}
RUN_REGISTER, RUN_STARTED, RUN_ENDED, STATUS, SCHEDULER, SHUTDOWN = 32, 33, 34, 35, 36, 37
SUBMIT, CONTROL, CLEAN, ATTACH = 38, 39, 40, 41
KNOWN = {1, 2, 3, 4, 5, 16, 17, 18, 19, 20, 21, 22, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 48, 49}
IDLE_CONNECTIONS = 500


def header(type_, length, magic=MAGIC, version=VERSION, reserved=0):
    return struct.pack("<IHHII", magic, version, type_, length, reserved)


def frame(type_, payload):
    return header(type_, len(payload)) + payload


# ---- the worker: runs the storm -----------------------------------------------------------

class Storm:
    """One worker's storm. `first_id`: the first job id the storm may touch (the jobs queued
    before it have smaller ids); `sleeper`: a process leading its own group, the only real pid
    a request names (the daemon signals a job's process group)."""

    def __init__(self, sock_path, seed, deadline, sleeper, first_id, tmp, log):
        self.sock_path = sock_path
        self.rng = random.Random(seed)
        self.deadline = deadline
        self.sleeper = sleeper
        self.first_id = first_id
        self.tmp = tmp
        self.log = log

    # -- values --
    def odd_value(self):
        r = self.rng
        return r.choice([True, False, "", 1.5, [], {}, None, 2 ** 63 - 1, 2 ** 64 - 1, -2 ** 63,
                         2 ** 64, 1e300, -1e300, -1, 0, "x" * r.choice([1, 300, 70000]), "\u00e9\u2603",
                         [1, "a"], {"a": [None]}, r.randint(-2 ** 31, 2 ** 31)])

    def job_id(self):
        r = self.rng
        if r.random() < 0.7:
            return r.randint(self.first_id, self.first_id + 150)
        return r.choice([0, -1, 2 ** 63 - 1, 2 ** 64 - 1, -2 ** 63])

    def pid_value(self):
        # Never a pid that may exist but the sleeper's: the daemon kills -pid (a group). Every
        # other value is out of range, <= 1 after the daemon's conversion (it skips those), or
        # of the wrong type.
        return self.rng.choice([self.sleeper, self.sleeper, 2_000_000_000, 2e9 + 0.5, -1, 0, 1.5,
                                True, False, "", [], {}, None, 2 ** 63 - 1, 2 ** 64 - 1, 1e300])

    def options(self):
        r = self.rng
        return {"name": r.choice(["storm", "", "n" * 300]), "argv": ["true"], "cwd": self.tmp,
                "priority": r.randint(-1000, 1000), "quantum_ms": r.choice([0, 200, 20000]),
                "gpu": r.choice(["", "0", "GPU-x"]), "time_limit_ms": r.choice([0, 500, 60000]),
                "kill_after_ms": r.choice([0, 1000, 30000]),
                "dependency": r.choice(["", "afterok:%d" % self.job_id(), "afterany:1:2,afternotok:3"]),
                "held": r.random() < 0.5, "begin_time": r.choice([None, 0.0, time.time() + 3600]),
                "output": "", "memory": r.choice(["", "swap", "managed", "checkpoint", "off"])}

    def request(self, type_):
        r = self.rng
        if type_ == RUN_REGISTER:
            body = dict(self.options(), pid=self.pid_value())
        elif type_ == SUBMIT:
            body = dict(self.options(), env=["HOME=" + self.tmp, "PATH=/usr/bin:/bin"],
                        script=r.choice([None, "#!/bin/sh\ntrue\n"]))
        elif type_ == RUN_STARTED:
            body = {"job_id": self.job_id(), "pid": self.pid_value()}
        elif type_ == RUN_ENDED:
            body = {"job_id": self.job_id(), "exit_code": r.choice([0, 1, None]),
                    "signal": r.choice([None, 9]), "timed_out": r.random() < 0.2, "error": "e"}
        elif type_ == STATUS:
            body = r.choice([{}, {"job_id": self.job_id()}])
        elif type_ == SCHEDULER:
            body = {"enabled": r.random() < 0.8}
        elif type_ == CONTROL:
            # No "suspend": it stops the processes of a job's shim connections, this worker's.
            body = {"action": r.choice(["cancel", "requeue", "hold", "release", "set-priority",
                                        "signal", "resume", "bogus"]),
                    "ids": [self.job_id() for _ in range(r.randint(0, 3))],
                    "priority": r.randint(-1000, 1000), "signal": r.choice([10, 12, 18, 0, 99])}
        elif type_ == CLEAN:
            body = {"older_than_ms": r.choice([0, 1000, 86400000])}
        else:  # ATTACH
            body = {"job_id": self.job_id()}
        # Mutations: fields of the wrong type, missing, or unknown. "pid" only ever gets a safe
        # value, job ids only the storm's own.
        for _ in range(r.choice([0, 0, 1, 1, 2, 3])):
            key = r.choice(list(body) + ["extra"]) if body else "extra"
            roll = r.random()
            if roll < 0.25:
                body.pop(key, None)
            elif key == "pid":
                body[key] = self.pid_value()
            elif key in ("job_id", "ids"):
                body[key] = r.choice([self.job_id(), [self.job_id()], "1", None, 1.5, [[1]]])
            else:
                body[key] = self.odd_value()
        if r.random() < 0.05:
            return json.dumps(r.choice([[], "x", 1, None, [body]])).encode()
        return json.dumps(body).encode()

    def shim_payload(self, type_):
        r = self.rng
        size = SHIM_SIZES[type_]
        if type_ == HELLO:
            return struct.pack("<QiI16s", r.choice([0, self.job_id() & (2 ** 64 - 1), r.getrandbits(64)]),
                               r.choice([self.sleeper, 0, -1, 2_000_000_000]), r.getrandbits(32),
                               r.randbytes(16))
        gpu = bytes([r.randint(0, 2)]) * 16  # few GPUs, so that leases meet
        if r.random() < 0.3:
            return gpu + r.randbytes(size - 16)
        if type_ == GAP_REPORT:
            return struct.pack("<16sqqiI", gpu, r.getrandbits(63), r.getrandbits(63), r.randint(-1, 8), 0)
        if type_ == MEM_REPORT:
            return struct.pack("<16siI", gpu, r.randint(-1, 8), r.randint(0, 4)) + b"".join(
                struct.pack("<Q", r.choice([0, 1 << 30, 80 << 30, 2 ** 64 - 1, r.getrandbits(64)]))
                for _ in range(14)) + struct.pack("<II", r.getrandbits(32), 0)
        return struct.pack("<16sQQIi", gpu, r.choice([0, 1, r.getrandbits(64)]),
                           r.choice([0, 1 << 30, 2 ** 64 - 1]), r.randint(0, 5), r.randint(-1, 8))

    # -- cases: each returns the bytes sent and whether to wait for an answer --
    def case_random_bytes(self):
        return self.rng.randbytes(self.rng.randint(0, 4096)), False

    def case_truncated(self):
        f = frame(self.rng.choice([STATUS, SUBMIT, RUN_REGISTER]), self.request(SUBMIT))
        return f[:self.rng.randint(0, len(f) - 1)], False

    def case_oversized(self):
        length = self.rng.choice([2 ** 32 - 1, 2 ** 31, 4 * 1024 * 1024 + 1])
        return header(self.rng.choice([STATUS, SUBMIT, HELLO]), length) + b"{" * self.rng.randint(0, 64), False

    def case_bad_header(self):
        r = self.rng
        body = self.request(STATUS)
        kind = r.randint(0, 3)
        if kind == 0:
            h = header(STATUS, len(body), magic=r.getrandbits(32))
        elif kind == 1:
            h = header(STATUS, len(body), version=r.choice([0, VERSION - 1, VERSION + 1, 65535]))
        elif kind == 2:
            h = header(r.choice([t for t in range(0, 65536, 97) if t not in KNOWN] + [0, 6, 42, 50, 65535]), len(body))
        else:
            h = header(r.choice([16, 17, 48, 49]), len(body))  # the daemon's own types
        return h + body, False

    def case_json_request(self):
        types = [RUN_REGISTER, RUN_STARTED, RUN_ENDED, STATUS, SCHEDULER, SUBMIT, CONTROL, CLEAN, ATTACH]
        data = b"".join(frame(self.rng.choice(types), self.request(self.rng.choice(types)))
                        for _ in range(self.rng.choice([1, 1, 1, 2, 3])))
        return data, True

    def case_runner(self):
        """A run's conversation: register, then start and end, any of them mutated."""
        r = self.rng
        data = frame(RUN_REGISTER, self.request(RUN_REGISTER))
        if r.random() < 0.6:
            data += frame(RUN_STARTED, self.request(RUN_STARTED))
        if r.random() < 0.5:
            data += frame(RUN_ENDED, self.request(RUN_ENDED))
        return data, r.random() < 0.5

    def case_shim(self):
        r = self.rng
        data = b""
        if r.random() < 0.9:
            data += frame(HELLO, self.shim_payload(HELLO))
        for _ in range(r.randint(0, 6)):
            t = r.choice([LEASE_REQUEST, LEASE_REQUEST, LEASE_RELEASED, MEM_REPORT, GAP_REPORT])
            data += frame(t, self.shim_payload(t))
        if r.random() < 0.1:
            data += frame(STATUS, b"{}")  # JSON on a shim connection
        return data, r.random() < 0.3

    def case_json_garbage(self):
        r = self.rng
        body = r.choice([b"{", b"{}" * 1000, b"\xff\xfe", b"[" * 10000, b'{"a":' * 500, b"{\"x\":\"\\ud800\"}",
                         b"1e999999", b'{"enabled":true}' + r.randbytes(8)])
        return frame(r.choice([STATUS, SCHEDULER, SUBMIT, CONTROL]), body), True

    def run(self):
        cases = [self.case_random_bytes, self.case_truncated, self.case_oversized, self.case_bad_header,
                 self.case_json_request, self.case_json_request, self.case_runner, self.case_shim,
                 self.case_shim, self.case_json_garbage]
        n = 0
        while time.monotonic() < self.deadline:
            case = self.rng.choice(cases)
            data, answer = case()
            self.log.write("%d %s %s\n" % (n, case.__name__[5:], data[:300].hex()))
            self.log.flush()
            self.send(data, answer, linger=self.rng.random() < 0.2)
            n += 1
        print("cases", n)

    def send(self, data, answer, linger):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(2)
        try:
            s.connect(self.sock_path)
            s.sendall(data)
            if answer or linger:
                # Until the first whole reply, the daemon's hang-up, or a short while.
                s.settimeout(0.2 if answer else 0.02)
                got = b""
                try:
                    while True:
                        chunk = s.recv(65536)
                        if not chunk:
                            break
                        got += chunk
                        if len(got) >= 16 and len(got) >= 16 + struct.unpack_from("<I", got, 8)[0]:
                            break
                except OSError:
                    pass
        except OSError:
            pass  # the daemon hung up (as it should), or is gone: the test notices
        finally:
            if self.rng.random() < 0.5:  # sometimes a reset instead of an orderly close
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()


def worker_main(argv):
    sock_path, seed, seconds, sleeper, first_id, tmp, log_path = argv
    with open(log_path, "w") as log:
        Storm(sock_path, int(seed), time.monotonic() + float(seconds), int(sleeper), int(first_id),
              tmp, log).run()


# ---- the test --------------------------------------------------------------------------

if __name__ != "__main__":
    from gshare_e2e import TestCase, proc_alive, proc_state
else:
    TestCase = unittest.TestCase


def _signature(report):
    """The kind of error and the first gshare function of a sanitizer report, with its line."""
    lines = report.splitlines()
    first = next((l for l in lines if "ERROR:" in l or "runtime error:" in l), "?")
    first = re.sub(r"^\S+: runtime error", "runtime error", re.sub(r" on address.*|==\d+==", "", first)).strip()
    where = ""
    for l in lines:
        m = re.match(r"\s+#\d+ 0x[0-9a-f]+ in (gshare::[\w:]+).* (/\S+:\d+)", l)
        if m:
            where = "%s %s" % (m.group(1), os.path.basename(m.group(2)))
            break
    return "%s in %s" % (first, where or "?")


class FuzzDaemonTest(TestCase):
    def test_storm(self):
        seed = int(os.environ.get("GSHARE_FUZZ_SEED") or random.SystemRandom().randint(1, 10 ** 9))
        seconds = float(os.environ.get("GSHARE_FUZZ_STORM_SECONDS") or 20)
        print("GSHARE_FUZZ_SEED=%d (%gs storm)" % (seed, seconds), flush=True)
        # drop_grace 1h: a storm connection that holds a lease is never stopped meanwhile.
        h = self.harness(config={"drop_grace": "1h"}, queue={"max_running": 1, "gpus": 1})
        daemon = h.start_daemon()
        # The jobs queued before the storm, which must come out of it unchanged.
        before = [h.submit("-H", "-J", "held", "--", "true"),
                  h.submit("--begin", "now+1h", "-p", "5", "-J", "later", "--", "true")]
        before.append(h.submit("--after", str(before[0]), "-J", "dependent", "--", "true"))
        snapshot = {jid: rec for jid, rec in h.queue_jobs().items() if jid in before}
        sleeper = subprocess.Popen(["sleep", "1000"], start_new_session=True, env=h.env)
        self.addCleanup(lambda: (sleeper.kill(), sleeper.wait()))

        # 500 idle connections, held open by this process for the whole storm (the daemon
        # inherits its own file limit, not this one).
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != resource.RLIM_INFINITY and soft < IDLE_CONNECTIONS + 200:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, IDLE_CONNECTIONS + 200), hard))
        idle = []
        self.addCleanup(lambda: [s.close() for s in idle])
        for i in range(IDLE_CONNECTIONS):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(h.socket)
            if i % 5 == 0:
                s.sendall(header(STATUS, 100)[: 1 + i % 15])  # half a header, then silence
            idle.append(s)

        crashes = []  # (signature, report, the cases sent last)
        end = time.monotonic() + seconds
        segment = 0
        while time.monotonic() < end:
            log_path = os.path.join(h.tmp, "storm%d.log" % segment)
            worker = subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "--worker", h.socket,
                 str(seed * 1000 + segment), str(end - time.monotonic()), str(sleeper.pid),
                 str(max(before) + 1), h.tmp, log_path],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            dead = False
            while worker.poll() is None:
                time.sleep(0.2)
                if proc_state(worker.pid) == "T":
                    os.kill(worker.pid, signal.SIGCONT)
                if not proc_alive(daemon):
                    dead = True
                    break
            if worker.poll() is None:
                worker.kill()
            out = worker.communicate()[0]
            if not dead:
                dead = not proc_alive(daemon)
            if not dead:
                self.assertIn("cases", out, "the storm worker failed:\n" + out)
                print("segment %d: %s" % (segment, out.strip().splitlines()[-1]))
                break
            time.sleep(0.5)  # the sanitizer's report is being written
            report = h.sanitizer_reports() or "\n".join(open(h.daemon_log, errors="replace").read().splitlines()[-40:])
            with open(log_path) as f:
                last = f.read().splitlines()[-5:]
            crashes.append((_signature(report), report, last, segment))
            print("segment %d: the daemon died: %s" % (segment, crashes[-1][0]), flush=True)
            for p in _sanitizer_files(h):
                os.rename(p, p.replace("sanitizer.", "crash%d." % segment))
            if len(crashes) >= 5:
                break
            daemon = h.start_daemon()
            segment += 1

        for s in idle:
            s.close()
        idle.clear()
        if crashes:
            self.fail("GSHARE_FUZZ_SEED=%d: the daemon died %d time(s):\n%s" % (seed, len(crashes), "\n".join(
                "== segment %d (worker seed %d): %s\nlast cases (index kind payload-hex):\n%s\n%s" % (
                    seg, seed * 1000 + seg, sig, "\n".join(last), report[:6000])
                for sig, report, last, seg in crashes)))
        alive = h.daemon_processes()
        self.assertEqual(h.daemon_pid(), daemon, "the daemon was replaced")
        self.assertEqual(alive, [daemon])
        r = h.gshare("status")
        self.assertEqual(r.returncode, 0, r.stderr)
        after = h.queue_jobs()
        for jid, rec in snapshot.items():
            self.assertIn(jid, after, "job %d is gone" % jid)
            # wait_seconds grows while it waits; all else must stay.
            self.assertEqual({k: v for k, v in after[jid].items() if k != "wait_seconds"},
                             {k: v for k, v in rec.items() if k != "wait_seconds"}, "job %d changed" % jid)


def _sanitizer_files(h):
    import glob
    return glob.glob(h.sanitizer_prefix() + ".*")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker_main(sys.argv[2:])
    else:
        unittest.main()
