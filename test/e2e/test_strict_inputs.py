"""Issues 19 (items 5, 6) and 27 (row 10): strict inputs. Durations and times past 3650 days,
priorities that are not decimal integers, --gpu values that name no GPU present, scripts that
are not small regular files and job options of the wrong JSON type are refused with one error
line (docs/cli.md "Exit status"); `gshare submit job.sh` finds a script in the working
directory as sbatch does."""
import json
import os
import socket
import struct
import time
import unittest

from gshare_e2e import TestCase
from test_malformed_frames import MAGIC, VERSION, REPLY, header

SUBMIT = 38
QUEUE = {"max_running": 2, "gpus": 1}


class StrictInputsTest(TestCase):
    def setUp(self):
        self.h = self.harness(queue=QUEUE)

    def test_huge_time_limit_is_an_error_not_an_overflow(self):
        h = self.h
        t0 = time.monotonic()
        r = h.gshare("run", "-t", "200000d", "--", "sleep", "1")
        h.assert_error_line(r, 125, "--time")
        self.assertIn("at most 3650d", r.stderr)
        self.assertLess(time.monotonic() - t0, 10)
        for opts in (["-t", "200000d"], ["-t", "99999999"], ["--quantum", "200000d"],
                     ["--kill-after", "200000d"], ["--begin", "now+200000d"],
                     ["--begin", "@99999999999"]):
            with self.subTest(opts=opts):
                h.assert_error_line(h.gshare("submit", "--hold", *opts, "--", "true"), 2)
        h.assert_error_line(h.gshare("clean", "--older-than", "200000d"), 2)
        self.assertEqual(h.queue_jobs(), {})

    def test_priority_is_a_decimal_integer(self):
        h = self.h
        for p in ("", "0x10", "1e2", "16.0", "1001", "99999999999999999999"):
            with self.subTest(priority=p):
                h.assert_error_line(h.gshare("submit", "--hold", "-p", p, "--", "true"), 2,
                                    "--priority")
        self.assertEqual(h.queue_jobs(), {})
        job = h.submit("--hold", "-p", "16", "--", "true")
        self.assertEqual(h.queue_jobs()[job]["priority"], 16)

    def test_script_must_be_a_small_regular_file(self):
        h = self.h
        fifo = os.path.join(h.tmp, "fifo")
        os.mkfifo(fifo)
        big = os.path.join(h.tmp, "big.sh")
        with open(big, "w") as f:
            f.write("#!/bin/sh\n" + "#" * (2 << 20) + "\n")
        for path in ("/dev/zero", fifo, big, h.tmp):
            with self.subTest(script=path):
                h.assert_error_line(h.gshare("submit", "--hold", "--script", path, timeout=15), 1,
                                    path)
        self.assertEqual(h.queue_jobs(), {})

    def test_script_in_the_working_directory(self):
        h = self.h
        with open(os.path.join(h.tmp, "job.sh"), "w") as f:
            f.write("#!/bin/sh\n#GSHARE -J fromscript -p 7\necho hello from the script\n")
        job = h.submit("job.sh")
        rec = h.wait_state(job, ("COMPLETED", "FAILED"))
        self.assertEqual((rec["name"], rec["priority"], rec["state"]),
                         ("fromscript", 7, "COMPLETED"))

    def test_gpu_must_name_a_gpu_present(self):
        h = self.h
        for gpu in ("5", "99", "-1", "GPU-nonsense", "01", "0,1"):
            with self.subTest(gpu=gpu):
                h.assert_error_line(h.gshare("submit", "--hold", "--gpu", gpu, "--", "true"), 2,
                                    "--gpu")
        h.assert_error_line(h.gshare("run", "--gpu", "5", "--", "true"), 125, "--gpu")
        self.assertEqual(h.queue_jobs(), {})
        h.submit("--hold", "--gpu", "0", "--", "true")

    def request(self, options):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect(self.h.socket)
        body = json.dumps(options).encode()
        s.sendall(header(SUBMIT, len(body)) + body)
        data = b""
        while len(data) < 16:
            chunk = s.recv(16 - len(data))
            self.assertTrue(chunk, "no reply to %r" % options)
            data += chunk
        magic, version, type_, length, _ = struct.unpack("<IHHII", data)
        self.assertEqual((magic, version, type_), (MAGIC, VERSION, REPLY))
        reply = b""
        while len(reply) < length:
            chunk = s.recv(length - len(reply))
            self.assertTrue(chunk)
            reply += chunk
        s.close()
        return json.loads(reply)

    def test_daemon_checks_each_json_field(self):
        h = self.h
        h.start_daemon()
        good = {"name": "n", "argv": ["true"], "cwd": h.tmp, "priority": 0, "quantum_ms": 20000,
                "gpu": "", "time_limit_ms": 0, "kill_after_ms": 30000, "dependency": "",
                "held": True, "begin_time": None, "output": "", "memory": "swap",
                "env": ["PATH=/bin"], "script": None}
        self.assertTrue(self.request(good)["ok"])
        for key, value in (("priority", 1.5), ("priority", "5"), ("quantum_ms", 0),
                           ("quantum_ms", 2 ** 64 - 1), ("time_limit_ms", 200000 * 86400000),
                           ("held", "yes"), ("begin_time", 1e300), ("argv", ["a", 1]),
                           ("argv", ["a\u0000b"]), ("gpu", "GPU-nonsense"), ("name", 7)):
            with self.subTest(key=key, value=value):
                bad = dict(good)
                bad[key] = value
                reply = self.request(bad)
                self.assertFalse(reply["ok"], reply)
                self.assertIn(key, reply["error"])
        self.assertEqual(len(h.queue_jobs()), 1)  # only the good one; the daemon still serves


if __name__ == "__main__":
    unittest.main()
