"""Auto-start race: several `gshare run` at once with no daemon running start exactly one."""
import os
import time
import unittest

from gshare_e2e import FAKE_APP, FAKECUDA_DIR, TestCase, proc_alive, proc_environ


class DaemonRaceTest(TestCase):
    def race(self, n, command):
        h = self.harness()
        self.assertEqual(h.daemon_processes(), [])
        jobs = [h.start_run(command, name="r%d" % i) for i in range(n)]
        for j in jobs:
            self.assertEqual(j.wait(60), 0, "%s: %s" % (j.name, j.stderr))
            self.assertNotIn("running without GPU sharing", j.stderr)
        # Losers of the race exit at once ('B'); give them a moment to be gone.
        deadline = time.monotonic() + 10
        while len(h.daemon_processes()) > 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        daemons = h.daemon_processes()
        self.assertEqual(len(daemons), 1, "daemons serving our socket: %s" % daemons)
        pid = h.daemon_pid()
        self.assertEqual(daemons, [pid])
        self.assertTrue(proc_alive(pid))
        return h

    def test_daemon_does_not_keep_the_starting_jobs_preload(self):
        h = self.harness()
        # Any preloaded library shows it; the fake driver rather than the shim, because a
        # sanitized gshare (CI) cannot start with the shim before ASan's runtime.
        job = h.start_run(["true"], env=dict(h.env, LD_PRELOAD=os.path.join(FAKECUDA_DIR, "libcuda.so.1")))
        self.assertEqual(job.wait(60), 0, job.stderr)
        env = proc_environ(h.daemon_pid())
        self.assertNotIn("LD_PRELOAD", env)
        self.assertEqual(env.get("XDG_RUNTIME_DIR"), h.run_dir)  # the rest is inherited

    def test_six_runs_start_one_daemon(self):
        h = self.race(6, ["true"])
        # Every run was registered with that one daemon.
        st = h.status()
        done = [j for j in st["jobs"] if j["argv"] == ["true"]]
        self.assertEqual(len(done), 6)
        self.assertTrue(all(j["state"] == "COMPLETED" for j in done), done)

    def test_race_of_gpu_jobs(self):
        h = self.race(4, [FAKE_APP, "--kernels", "3", "--kernel-ms", "10"])
        kernels = h.ops("K")
        self.assertEqual(len(kernels), 12)
        pids = {k.pid for k in kernels}
        self.assertEqual(len(pids), 4)
        by_pid = {p: [k for k in kernels if k.pid == p] for p in pids}
        ps = sorted(pids)
        for i in range(len(ps)):
            for j in range(i + 1, len(ps)):
                h.assert_exclusive(by_pid[ps[i]], by_pid[ps[j]], min_switches=0)


if __name__ == "__main__":
    unittest.main()
