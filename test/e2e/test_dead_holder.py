"""A lease holder killed with SIGKILL: the daemon reclaims its lease when the shim's
connection closes, the waiting job runs to completion, and the dead job is recorded FAILED."""
import os
import signal
import unittest

from gshare_e2e import TestCase


class DeadHolderTest(TestCase):
    def test_killed_holder_frees_the_gpu(self):
        h = self.harness(config={"quantum": "60s"})
        h.start_daemon()
        a = h.start_fake(["--kernels", 1000, "--kernel-ms", 20], name="a")
        a_pid = a.child_pid()
        h.wait_kernels(a_pid, 3)
        b = h.start_fake(["--kernels", 10, "--kernel-ms", 20], name="b")
        b_pid = b.child_pid()

        def b_waiting():
            rec = h.job_record(lambda j: j.get("name") == "b")
            return rec is not None and rec.get("lease") == "waiting"
        h.wait_for(b_waiting, 30, "job b waiting for the lease")
        self.assertEqual(h.ops("K", b_pid), [], "b ran while a held the lease")

        os.kill(a_pid, signal.SIGKILL)
        self.assertEqual(a.wait(30), -signal.SIGKILL, "gshare run re-raises the job's signal")
        h.assert_done(b, 10, timeout=30)  # well before a's 60 s quantum would end

        ka, kb = h.ops("K", a_pid), h.ops("K", b_pid)
        self.assertEqual(len(kb), 10)
        self.assertLess(len(ka), 1000)
        self.assertGreater(kb[0].start, max(o.end for o in ka))

        rec_a = h.job_record(lambda j: j.get("name") == "a")
        self.assertIsNotNone(rec_a)
        self.assertEqual(rec_a["pid"], a_pid)
        self.assertNotEqual(rec_a["state"], "RUNNING")
        self.assertEqual(rec_a["state"], "FAILED")
        self.assertEqual(rec_a["signal"], signal.SIGKILL)
        self.assertIsNone(rec_a["exit_code"])
        rec_b = h.job_record(lambda j: j.get("name") == "b")
        self.assertEqual(rec_b["state"], "COMPLETED")
        st = h.status()
        self.assertIsNone(st["gpus"][0]["holder"])

    def test_killed_waiter_is_forgotten(self):
        # A waiter that dies must leave the queue: the holder keeps going and the next waiter
        # gets the lease when the holder is done.
        h = self.harness(config={"quantum": "60s"})
        h.start_daemon()
        a = h.start_fake(["--kernels", 100, "--kernel-ms", 20], name="a")
        pa = a.child_pid()
        h.wait_kernels(pa, 2)
        b = h.start_fake(["--kernels", 10, "--kernel-ms", 20], name="b")
        pb = b.child_pid()

        def waiting(name):
            rec = h.job_record(lambda j: j.get("name") == name)
            return rec is not None and rec.get("lease") == "waiting"
        h.wait_for(lambda: waiting("b"), 30, "job b waiting")
        c = h.start_fake(["--kernels", 10, "--kernel-ms", 20], name="c")
        pc = c.child_pid()
        h.wait_for(lambda: waiting("c"), 30, "job c waiting")
        os.kill(pb, signal.SIGKILL)
        self.assertEqual(b.wait(30), -signal.SIGKILL)
        h.assert_done(a, 100)
        h.assert_done(c, 10)
        self.assertEqual(h.ops("K", pb), [])
        ka, kc = h.ops("K", pa), h.ops("K", pc)
        self.assertGreater(kc[0].start, ka[-1].end)
        st = h.status()
        self.assertEqual(st["gpus"][0]["waiters"], [])
        self.assertIsNone(st["gpus"][0]["holder"])
        states = {j["name"]: (j["state"], j["signal"]) for j in st["jobs"]}
        self.assertEqual(states, {"a": ("COMPLETED", None), "b": ("FAILED", signal.SIGKILL),
                                  "c": ("COMPLETED", None)})


if __name__ == "__main__":
    unittest.main()
