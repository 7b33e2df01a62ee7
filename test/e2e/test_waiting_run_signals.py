"""Issue 19: a `gshare run` that waits pending (--hold, --after a job that never ends, --begin
in an hour) and is ended by SIGINT (Ctrl-C) or SIGHUP (its terminal closed), fifty times in a
row. Its job must end CANCELLED each time, and the daemon must serve on, the same process
throughout. (The daemon cancelled such a job from inside the drop of its connection, and the
cancel's reply dropped the connection again: a double free, which ASan catches at once.)
Waiting for priority is left out: `run` jobs are not held back by max_running."""
import signal
import subprocess
import unittest

from gshare_e2e import TestCase

ROUNDS = 50


class WaitingRunSignalsTest(TestCase):
    def test_signals_cancel_waiting_runs(self):
        h = self.harness(queue={"max_running": 1, "gpus": 1})
        daemon = h.start_daemon()
        # A job that never ends: held, so the --after jobs wait on it for good.
        never = h.submit("-H", "-J", "never", "--", "true")
        variants = [("--hold",), ("--after", str(never)), ("--begin", "now+1h")]
        names = {}
        for i in range(ROUNDS):
            variant = variants[i % len(variants)]
            sig = signal.SIGINT if i % 2 == 0 else signal.SIGHUP
            name = "w%d" % i
            # SIGINT and SIGHUP at their default actions, as under a terminal (a background
            # job of a non-interactive shell would inherit SIGINT ignored).
            run = subprocess.Popen(
                h.gshare_argv("run", *variant, "-J", name, "--", "true"), env=h.env, cwd=h.tmp,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                preexec_fn=lambda: [signal.signal(s, signal.SIG_DFL) for s in (signal.SIGINT, signal.SIGHUP)])
            self.addCleanup(lambda p=run: p.poll() is None and (p.kill(), p.wait()))
            what = "round %d: run %s, %s" % (i, " ".join(variant), signal.Signals(sig).name)
            rec = h.wait_for(lambda: next((j for j in h.queue_jobs().values() if j["name"] == name), None),
                             30, "the pending job of " + what)
            self.assertEqual(rec["state"], "PENDING", what)
            run.send_signal(sig)
            try:
                rc = run.wait(30)
            except subprocess.TimeoutExpired:
                self.fail("%s: gshare run did not end\n%s" % (what, h.diagnostics()))
            self.assertEqual(rc, -sig, "%s: gshare run must die of the signal" % what)
            names[rec["id"]] = what
            self.assertEqual(h.wait_state(rec["id"], "CANCELLED", timeout=10)["start_time"], None, what)
            # The job is cancelled when the daemon sees the connection close; it must then
            # serve on, the same process.
            alive = h.daemon_processes()
            self.assertEqual(alive, [daemon], "%s: the daemon is gone or was replaced\n%s" % (
                what, h.diagnostics()))
            self.assertEqual(h.daemon_pid(), daemon, "%s: the daemon was replaced\n%s" % (
                what, h.diagnostics()))

        self.assertEqual(h.daemon_pid(), daemon, "the daemon was replaced")
        jobs = h.queue_jobs()
        for jid, what in names.items():
            self.assertEqual(jobs[jid]["state"], "CANCELLED", what)
        self.assertEqual(jobs[never]["state"], "PENDING")


if __name__ == "__main__":
    unittest.main()
