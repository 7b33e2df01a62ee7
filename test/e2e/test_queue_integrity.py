"""Issues 19 and 27: the queue's records stay right when the disk or the daemon fails.

- A job starts only once its RUNNING state is stored: with the database unwritable (a file
  size limit of 1 byte on the daemon, as a full disk), a job that becomes due stays PENDING
  and runs nowhere; once writes work again it runs, exactly once, also across a restart.
- One damaged row fails its own job; the rest of the queue loads and works.
- A job that ends while the daemon is down gets its end time from its supervisor.
- A submission retried with the same key returns the job the first one made."""
import json
import os
import resource
import signal
import socket
import sqlite3
import struct
import time
import unittest

from gshare_e2e import TestCase

REPLY, SUBMIT = 48, 38
MAGIC = 0x52485347
_PROTOCOL_H = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "include",
                           "gshare", "protocol.h")
with open(_PROTOCOL_H) as _f:
    import re
    VERSION = int(re.search(r"kVersion = (\d+);", _f.read()).group(1))


def count_runs(path):
    if not os.path.exists(path):
        return 0
    with open(path) as f:
        return len([line for line in f if line.strip()])


class QueueIntegrityTest(TestCase):
    def test_no_start_before_running_is_stored(self):
        h = self.harness()
        daemon = h.start_daemon()
        runs = os.path.join(h.tmp, "runs")
        # A marker file that needs no bytes written: it works under the size limit too.
        job = h.submit("--begin", "now+2s", "--", "sh", "-c", "echo x >> %s; touch %s.$$" % (runs, runs))
        soft, hard = resource.prlimit(daemon, resource.RLIMIT_FSIZE)
        resource.prlimit(daemon, resource.RLIMIT_FSIZE, (1, hard))
        try:
            time.sleep(4)  # the begin time passes while nothing can be stored
            self.assertEqual([f for f in os.listdir(h.tmp) if f.startswith("runs.")], [],
                             "the job started although its start could not be stored")
            self.assertEqual(h.queue_jobs()[job]["state"], "PENDING")
        finally:
            resource.prlimit(daemon, resource.RLIMIT_FSIZE, (soft, hard))
        h.wait_state(job, "COMPLETED", timeout=30)
        self.assertEqual(count_runs(runs), 1)
        # A restart does not start it again.
        os.kill(daemon, signal.SIGKILL)
        h.start_daemon()
        # Two requests: the second is answered after an admission pass (one ends every turn
        # of the daemon's loop), which would have queued or started the job again.
        h.status()
        self.assertEqual(h.queue_jobs()[job]["state"], "COMPLETED")
        self.assertEqual(count_runs(runs), 1)

    def test_a_damaged_row_fails_its_job_only(self):
        h = self.harness()
        h.start_daemon()
        ids = [h.submit("--hold", "--", "true") for _ in range(3)]
        self.assertEqual(h.gshare("daemon", "stop").returncode, 0)
        db = sqlite3.connect(os.path.join(h.state_dir, "gshare.db"))
        db.execute("UPDATE jobs SET argv = '[1,2]' WHERE id = ?", (ids[0],))
        db.commit()
        db.close()
        h.start_daemon()
        db = sqlite3.connect(os.path.join(h.state_dir, "gshare.db"))
        state, reason = db.execute("SELECT state, reason FROM jobs WHERE id = ?", (ids[0],)).fetchone()
        db.close()
        self.assertEqual(state, "FAILED")
        self.assertIn("cannot be read", reason)
        r = h.gshare("queue", "-a", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("job %d: its record cannot be read" % ids[0], r.stderr)
        jobs = {j["id"]: j for j in json.loads(r.stdout)["jobs"]}
        self.assertEqual([jobs[i]["state"] for i in ids[1:]], ["PENDING", "PENDING"])
        r = h.gshare("release", str(ids[2]))
        self.assertEqual(r.returncode, 0, r.stderr)
        h.wait_state(ids[2], "COMPLETED")

    def test_end_time_of_a_job_that_ended_while_the_daemon_was_down(self):
        h = self.harness()
        daemon = h.start_daemon()
        job = h.submit("--", "sleep", "1")
        h.wait_state(job, "RUNNING")
        os.kill(daemon, signal.SIGKILL)
        time.sleep(4)  # the job ends meanwhile; its supervisor keeps its end
        h.start_daemon()
        rec = h.wait_state(job, "COMPLETED", timeout=30)
        elapsed = rec["end_time"] - rec["start_time"]
        self.assertLess(elapsed, 2.5, "end time %.1f s after the start: the daemon's return, not the "
                        "job's end" % elapsed)
        self.assertGreaterEqual(elapsed, 0.9)
        with open(h.daemon_log) as f:
            self.assertNotIn("end without a job", f.read())

    def exchange(self, h, type_, payload):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect(h.socket)
        body = json.dumps(payload).encode()
        s.sendall(struct.pack("<IHHII", MAGIC, VERSION, type_, len(body), 0) + body)
        data = b""
        while len(data) < 16:
            data += s.recv(16 - len(data))
        length = struct.unpack("<IHHII", data)[3]
        body = b""
        while len(body) < length:
            body += s.recv(length - len(body))
        s.close()
        return json.loads(body)

    def test_a_retried_submission_is_not_duplicated(self):
        h = self.harness()
        h.start_daemon()
        request = {"name": "k", "argv": ["true"], "cwd": h.tmp, "priority": 0, "quantum_ms": 20000,
                   "gpu": "", "held": True, "env": ["PATH=/usr/bin:/bin"], "script": None,
                   "submit_key": "0123456789abcdef0123456789abcdef"}
        first = self.exchange(h, SUBMIT, request)
        self.assertTrue(first["ok"], first)
        again = self.exchange(h, SUBMIT, request)
        self.assertEqual(again["job_id"], first["job_id"])
        self.assertTrue(again.get("existing"))
        other = self.exchange(h, SUBMIT, dict(request, submit_key="another"))
        self.assertNotEqual(other["job_id"], first["job_id"])
        self.assertEqual(sorted(h.queue_jobs()), sorted([first["job_id"], other["job_id"]]))


if __name__ == "__main__":
    unittest.main()
