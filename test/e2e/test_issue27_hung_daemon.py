"""Issue 27 (row 6): a hung daemon froze every job. With the daemon stopped (SIGSTOP), every
shim notices within GSHARE_DAEMON_TIMEOUT_MS that it stopped answering its pings, runs
ungated with one warning on stderr, and goes back to sharing the GPU (one job at a time in
exclusive mode) once the daemon answers again (SIGCONT)."""
import os
import signal
import time
import unittest

from gshare_e2e import FAKE_APP, TestCase, fmt_ops, overlaps

TIMEOUT_MS = 2000   # GSHARE_DAEMON_TIMEOUT_MS given to the jobs
MARGIN_S = 2.0      # scheduling noise on a loaded CI machine
KERNELS = 600
KERNEL_MS = 20
QUANTUM = ["--quantum", "300ms"]


class HungDaemonTest(TestCase):
    def test_issue27_fail_open_on_a_stopped_daemon_and_gate_again(self):
        h = self.harness()
        daemon = h.start_daemon()
        self.addCleanup(lambda: os.kill(daemon, signal.SIGCONT))
        env = dict(h.env, GSHARE_DAEMON_TIMEOUT_MS=str(TIMEOUT_MS))
        fake = [FAKE_APP, "--kernels", str(KERNELS), "--kernel-ms", str(KERNEL_MS)]
        jobs = [h.start_run(fake, QUANTUM + ["-J", n], name=n, env=env) for n in ("a", "b")]
        pids = [j.child_pid() for j in jobs]
        for p in pids:
            h.wait_kernels(p, 3)

        os.kill(daemon, signal.SIGSTOP)
        stopped_ns = time.clock_gettime_ns(time.CLOCK_MONOTONIC)

        def after(pid, t_ns):
            return [k for k in h.ops("K", pid) if k.start >= t_ns]

        # Both make progress while the daemon is stopped: the one that held the lease, and
        # the one that waited for it (it waits no longer than the timeout).
        def warnings(job):
            return [l for l in job.stderr.splitlines() if "without GPU sharing" in l]

        h.wait_for(lambda: all(len(after(p, stopped_ns)) >= 5 for p in pids) and
                   all(warnings(j) for j in jobs),
                   TIMEOUT_MS / 1000 + MARGIN_S, "both jobs running with the daemon stopped")
        for j in jobs:
            self.assertEqual(len(warnings(j)), 1, "%s stderr: %r" % (j.name, j.stderr))
            self.assertIn("stopped answering", warnings(j)[0])
        time.sleep(0.5)
        ungated = [after(p, stopped_ns) for p in pids]
        self.assertTrue(overlaps(ungated[0], ungated[1]),
                        "the jobs never ran together while the daemon was stopped\n%s"
                        % fmt_ops(ungated[0] + ungated[1]))

        os.kill(daemon, signal.SIGCONT)
        h.wait_for(lambda: all("GPU sharing resumed" in j.stderr for j in jobs), 10,
                   "both shims reconnected")
        gated_ns = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        for j in jobs:
            self.assertEqual(j.wait(120), 0, "%s: %s" % (j.name, j.stderr))
            self.assertIn("fake_app: done %d" % KERNELS, j.stdout)
            self.assertEqual(len(warnings(j)), 1, "%s stderr: %r" % (j.name, j.stderr))
        a_ops, b_ops = after(pids[0], gated_ns), after(pids[1], gated_ns)
        self.assertTrue(a_ops and b_ops, fmt_ops(h.ops("K")))
        h.assert_exclusive(a_ops, b_ops, min_switches=2)


if __name__ == "__main__":
    unittest.main()
