"""The daemon's record of a job, as `gshare status --json` shows it after the job ended."""
import os
import signal
import subprocess
import unittest

from gshare_e2e import FAKE_APP, SHIM, TestCase


class JobRecordTest(TestCase):
    def test_completed_job(self):
        h = self.harness()
        argv = [FAKE_APP, "--kernels", "5", "--kernel-ms", "20"]
        r = h.gshare("run", "-J", "myname", "-p", "3", "--", *argv)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("fake_app: done 5", r.stdout)
        kernels = h.ops("K")
        self.assertEqual(len(kernels), 5)
        st = h.status()
        self.assertEqual(st["schema_version"], 1)
        mine = [j for j in st["jobs"] if j["name"] == "myname"]
        self.assertEqual(len(mine), 1, st["jobs"])
        j = mine[0]
        self.assertEqual(j["priority"], 3)
        self.assertEqual(j["state"], "COMPLETED")
        self.assertEqual(j["exit_code"], 0)
        self.assertIsNone(j["signal"])
        self.assertEqual(j["argv"], argv)
        self.assertEqual(j["pid"], kernels[0].pid)
        self.assertEqual(j["cwd"], h.tmp)
        self.assertGreater(j["lease_seconds"], 0)
        self.assertLessEqual(j["submit_time"], j["start_time"])
        self.assertLessEqual(j["start_time"], j["end_time"])
        # No one holds the GPU once the only job is gone.
        self.assertEqual([g["holder"] for g in st["gpus"]], [None])

    def test_default_name_and_failures(self):
        h = self.harness(config={"default_priority": -7})
        r = h.gshare("run", "--", FAKE_APP, "--kernels", "1", "--kernel-ms", "1", "--exit-code", "4")
        self.assertEqual(r.returncode, 4, r.stderr)
        r = h.gshare("run", "-J", "killed", "--", "sh", "-c", "kill -KILL $$")
        self.assertEqual(r.returncode, -signal.SIGKILL)
        jobs = h.status()["jobs"]
        failed = [j for j in jobs if j["argv"][0] == FAKE_APP]
        self.assertEqual(len(failed), 1, jobs)
        f = failed[0]
        self.assertEqual(f["name"], os.path.basename(FAKE_APP))  # the command's name is the default
        self.assertEqual(f["priority"], -7)    # from default_priority
        self.assertEqual((f["state"], f["exit_code"], f["signal"]), ("FAILED", 4, None))
        killed = [j for j in jobs if j["name"] == "killed"]
        self.assertEqual(len(killed), 1, jobs)
        k = killed[0]
        self.assertEqual((k["state"], k["exit_code"], k["signal"]), ("FAILED", None, signal.SIGKILL))

    # Regression: non-UTF-8 bytes and options before `run` (issue 2).
    def test_status_after_non_utf8_process(self):
        h = self.harness()
        h.start_daemon()
        link = os.path.join(h.tmp.encode(), b"fake-\xe9")
        os.symlink(FAKE_APP, link)
        r = subprocess.run([link, b"--kernels", b"2", b"--kernel-ms", b"5"], cwd=h.tmp,
                           env=dict(h.env, LD_PRELOAD=SHIM), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(h.ops("K")), 2)
        h.wait_for(lambda: h.gshare("status", "--json").returncode == 0, 2,
                   "gshare status to work again")


if __name__ == "__main__":
    unittest.main()
