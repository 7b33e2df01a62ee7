"""The in-flight window: while another job waits, the holder keeps at most about
GSHARE_INFLIGHT_LAUNCHES submissions queued, so its release (drain) does not wait for a deep
queue. The holder submits 600 kernels of 10 ms far faster than they run (its submitting lasts
over 0.6 s, so that the second job, started once the first kernel ran, arrives while it still
submits, even on a loaded machine); the quantum is 1 s. With the window the second job runs before the holder's queue
is done; without it (control), it waits for the holder's whole queue. The control's quantum is
3 s: its holder must have queued all 600 kernels before the DROP, and on a loaded machine the
submitting alone has taken over 1 s."""
import unittest

from gshare_e2e import FAKE_APP, TestCase

HOLDER = ["--route", "dlsym", "--kernels", "600", "--kernel-ms", "10", "--gap-ms", "1",
          "--sync-every", "0"]
WAITER = ["--route", "gpa", "--kernels", "5", "--kernel-ms", "10"]


class InflightWindowTest(TestCase):
    def run_pair(self, window, quantum="1s"):
        h = self.harness(config={"quantum": quantum})
        h.start_daemon()
        env = dict(h.env, GSHARE_INFLIGHT_LAUNCHES=str(window))
        holder = h.start_run([FAKE_APP] + HOLDER, ["-J", "holder"], env=env)
        holder_pid = holder.child_pid()
        h.wait_kernels(holder_pid, 1)
        waiter = h.start_run([FAKE_APP] + WAITER, ["-J", "waiter"], env=env)
        waiter_pid = waiter.child_pid()
        h.assert_done(waiter, 5)
        h.assert_done(holder, 600)
        hold, wait = h.ops("K", holder_pid), h.ops("K", waiter_pid)
        h.assert_exclusive(hold, wait, min_switches=0)
        return wait[0].start, max(o.end for o in hold)

    def test_window_bounds_the_queue_of_a_contended_holder(self):
        waiter_first, holder_last = self.run_pair(64)
        self.assertLess(waiter_first, holder_last,
                        "the waiter only ran after the holder's whole queue")

    def test_without_window_the_whole_queue_drains_first(self):
        waiter_first, holder_last = self.run_pair(0, quantum="3s")
        self.assertGreater(waiter_first, holder_last)


if __name__ == "__main__":
    unittest.main()
