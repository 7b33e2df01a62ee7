"""Issue 27 (row 6): a hung daemon froze every job. With the daemon stopped (SIGSTOP), every
shim notices within GSHARE_DAEMON_TIMEOUT_MS that it stopped answering its pings, runs
ungated with one warning on stderr, and goes back to sharing the GPU (one job at a time in
exclusive mode) once the daemon answers again (SIGCONT). And the clients (the hostile-users
issue): `gshare run` exits with its command's status though the daemon never answers, the
job's end is recorded once it does, and other commands give up within the same timeout."""
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
    def test_fail_open_on_a_stopped_daemon_and_gate_again(self):
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

    def test_run_never_waits_for_a_stopped_daemon_and_its_end_is_recorded(self):
        """Clients never hang on a hung daemon: with the daemon stopped, `gshare run -- true`
        (its registration unanswered) and a job whose end report goes unanswered both exit with
        their command's status within the reply timeout; once the daemon runs again both ends
        are recorded COMPLETED. `status` fails within the timeout with one line, and `queue`
        still lists the jobs from the database."""
        h = self.harness()
        daemon = h.start_daemon()
        self.addCleanup(lambda: os.kill(daemon, signal.SIGCONT))
        env = dict(h.env, GSHARE_DAEMON_TIMEOUT_MS=str(TIMEOUT_MS))
        go = os.path.join(h.tmp, "go")
        waiting = h.start_run(["sh", "-c", "while [ ! -e %s ]; do sleep 0.05; done" % go],
                              ["-J", "ends-while-stopped"], name="waiting", env=env)
        h.wait_for(lambda: (h.job_record(lambda j: j["name"] == "ends-while-stopped") or
                            {}).get("pid"), 30, "the job's start report")

        os.kill(daemon, signal.SIGSTOP)
        open(go, "w").close()
        self.assertEqual(waiting.wait(TIMEOUT_MS / 1000 + 10), 0, waiting.stderr)
        self.assertIn("did not answer", waiting.stderr)
        t0 = time.monotonic()
        r = h.gshare("run", "-J", "registered-while-stopped", "--", "true", env=env,
                     timeout=TIMEOUT_MS / 1000 + 20)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertLess(time.monotonic() - t0, TIMEOUT_MS / 1000 + MARGIN_S + 3, r.stderr)
        self.assertIn("running without GPU sharing", r.stderr)
        r = h.gshare("status", env=env, timeout=TIMEOUT_MS / 1000 + 20)
        h.assert_error_line(r, 1, "did not answer")
        r = h.gshare("queue", "-a", "--json", env=env, timeout=TIMEOUT_MS / 1000 + 20)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("ends-while-stopped", r.stdout)

        os.kill(daemon, signal.SIGCONT)
        for name in ("ends-while-stopped", "registered-while-stopped"):
            rec = h.wait_for(lambda: [j for j in h.queue_jobs().values()
                                      if j["name"] == name and j["state"] != "RUNNING"],
                             30, "the end of %s" % name)[0]
            self.assertEqual((rec["state"], rec["exit_code"]), ("COMPLETED", 0), rec)


if __name__ == "__main__":
    unittest.main()
