"""Issue 24 item 1: `gshare top`, a live view, on the fake driver and fake NVML (2 GPUs):
  - batch mode (`top -b -n 1`, as top(1)): both GPUs from NVML, the idle one too, with their
    name, utilization, memory, temperature and power; the running job (its GPU, user, state R)
    ahead of the pending one (PD); the same frame as text without a terminal; live mode
    without a terminal is refused with one line (exit 2);
  - in a real terminal (tmux: send-keys, capture-pane): the frame is drawn, the arrow key moves
    the selection, `h` holds the selected pending job and `h` again releases it, `+` raises its
    priority, `c` then `y` cancels it, and `q` ends top; each change is checked in the
    daemon's queue, not on the screen only;
  - at 80 columns and at 200 (tmux resize-window): every line fits, the pending job's REASON
    (the queue's reason) shows at both widths, the wide terminal shows every column; `?` shows
    the help page and back, `o` changes the order (said in the title)."""
import os
import shlex
import shutil
import subprocess
import time
import unittest

from gshare_e2e import FAKE_APP, FAKECUDA_DIR, FAKENVML_DIR, TestCase


class TopTest(TestCase):
    def harness(self):
        h = super().harness(queue={"gpus": 2, "max_running": 1})
        h.env["FAKE_CUDA_DEVICES"] = "2"
        h.env["FAKE_NVML_UTIL"] = "37"
        h.env["LD_LIBRARY_PATH"] = FAKECUDA_DIR + ":" + FAKENVML_DIR
        return h

    def two_jobs(self, h):
        """A running job on GPU 0 and a pending one behind it (max_running 1 per GPU)."""
        run = h.submit("-J", "trainer", "--gpu", "0", "--", FAKE_APP, "--kernels", "2", "--sleep-ms", "60000")
        h.wait_state(run, "RUNNING")
        pend = h.submit("-J", "waiter", "--gpu", "0", "--", "true")
        h.wait_state(pend, "PENDING")
        return run, pend

    def test_batch_frame(self):
        h = self.harness()
        h.start_daemon()
        run, pend = self.two_jobs(h)
        r = h.gshare("top", "-b", "-n", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        gpu_rows = [l for l in lines if l.split()[:3] in (["0", "Fake", "GPU"], ["1", "Fake", "GPU"])]
        self.assertEqual(len(gpu_rows), 2, r.stdout)
        for row in gpu_rows:
            self.assertIn("37%", row)
            self.assertIn("40C", row)
            self.assertIn("100W", row)
        header = next(i for i, l in enumerate(lines) if l.startswith("JOB "))
        jobs = [l.split() for l in lines[header + 1:] if l.split()[:1] in (["%d" % run],
                                                                          ["%d" % pend])]
        self.assertEqual([j[0] for j in jobs], ["%d" % run, "%d" % pend], r.stdout)
        self.assertEqual(jobs[0][2], "R")
        self.assertEqual(jobs[1][2], "PD")
        self.assertEqual(jobs[0][4], "trainer")
        self.assertEqual(jobs[1][4], "waiter")
        # Live mode needs a terminal.
        r = h.gshare("top", "-n", "1")
        h.assert_error_line(r, 2, "terminal")

    def start_tmux(self, h, width):
        """`gshare top -d 0.2` in a tmux session of `width` x 40; (tmux argv, env, screen(): the
        pane's text, keys(*k): send keys to it)."""
        sock = os.path.join(h.tmp, "tmux.sock")
        script = os.path.join(h.tmp, "top.sh")
        with open(script, "w") as f:
            for k, v in h.env.items():
                f.write("export %s=%s\n" % (k, shlex.quote(v)))
            f.write("exec %s top -d 0.2\n" % " ".join(shlex.quote(a) for a in h.gshare_argv()))
        tmux = ["tmux", "-S", sock]
        env = dict(os.environ, TERM="xterm")
        subprocess.run(tmux + ["new-session", "-d", "-x", str(width), "-y", "40", "-s", "top",
                               "sh " + shlex.quote(script)], check=True, env=env)
        self.addCleanup(subprocess.run, tmux + ["kill-server"], stderr=subprocess.DEVNULL)

        def screen():
            return subprocess.run(tmux + ["capture-pane", "-p", "-t", "top"], check=True,
                                  stdout=subprocess.PIPE, text=True, env=env).stdout

        def keys(*k):
            subprocess.run(tmux + ["send-keys", "-t", "top"] + list(k), check=True, env=env)

        return tmux, env, screen, keys

    def test_keys_in_a_real_terminal(self):
        if shutil.which("tmux") is None:
            self.skipTest("tmux is not installed (scripts/deps.sh installs it)")
        h = self.harness()
        h.start_daemon()
        run, pend = self.two_jobs(h)
        tmux, env, screen, keys = self.start_tmux(h, 200)

        def shows(text, timeout=15):
            h.wait_for(lambda: text in screen(), timeout, "%r on the screen:\n%s" % (text, screen()))

        shows("waiter")
        shows("gshare top")
        keys("Down")  # from the running job to the pending one
        time.sleep(0.5)
        keys("h")
        h.wait_for(lambda: h.queue_jobs()[pend].get("held"), 10, "job %d held" % pend)
        shows("hold job %d: done" % pend)
        keys("h")
        h.wait_for(lambda: not h.queue_jobs()[pend].get("held"), 10, "job %d released" % pend)
        keys("+")
        h.wait_for(lambda: h.queue_jobs()[pend]["priority"] == 1, 10, "job %d at priority 1" % pend)
        keys("c")
        shows("cancel job %d? (y/n)" % pend)
        keys("y")
        h.wait_state(pend, "CANCELLED")
        self.assertEqual(h.queue_jobs()[run]["state"], "RUNNING")  # the other job untouched
        keys("q")
        h.wait_for(lambda: subprocess.run(tmux + ["has-session", "-t", "top"], env=env,
                                          stderr=subprocess.DEVNULL).returncode != 0,
                   10, "top to end on q")

    def test_widths_reason_help_and_order_in_a_real_terminal(self):
        if shutil.which("tmux") is None:
            self.skipTest("tmux is not installed (scripts/deps.sh installs it)")
        h = self.harness()
        h.start_daemon()
        run, pend = self.two_jobs(h)
        reason = h.queue_jobs()[pend]["reason"]
        self.assertTrue(reason, "a pending job behind max_running has a reason")
        tmux, env, screen, keys = self.start_tmux(h, 80)

        def row(job):
            return next((l for l in screen().splitlines() if l.split()[:1] == [str(job)]), "")

        def job_header():
            return next((l for l in screen().splitlines() if l.startswith("JOB ")), "")

        for width in (80, 200):
            if width != 80:
                subprocess.run(tmux + ["resize-window", "-t", "top", "-x", str(width)], check=True,
                               env=env)
                # The next frame after the resize is drawn at the new width.
                h.wait_for(lambda: "SWAPS" in job_header(), 15, "a frame of %d columns:\n%s"
                           % (width, screen()))
            h.wait_for(lambda: reason in row(pend), 15, "the reason %r at %d columns:\n%s"
                       % (reason, width, screen()))
            text = screen()
            self.assertTrue(all(len(l.rstrip()) <= width for l in text.splitlines()), text)
            header = next(l for l in text.splitlines() if l.startswith("JOB "))
            self.assertIn("REASON", header)
            if width == 200:
                for column in ("USER", "LEASE", "WAITED", "RESIDENT", "SWAPPED", "SWAPS", "COMMAND"):
                    self.assertIn(column, header)
            else:
                self.assertNotIn("SWAPS", header)
            for whole in ("COMMAND", "WAITERS", "? help"):  # not cut off at the right edge
                self.assertIn(whole, text)
        keys("?")
        h.wait_for(lambda: "Keys" in screen() and row(pend) == "", 15, "the help page:\n%s" % screen())
        keys("?")
        h.wait_for(lambda: reason in row(pend), 15, "the jobs again:\n%s" % screen())
        keys("o")
        h.wait_for(lambda: "sorted by priority" in screen(), 15, "the order in the title:\n%s"
                   % screen())
        keys("q")


if __name__ == "__main__":
    unittest.main()
