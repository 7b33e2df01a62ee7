"""Drop grace: a holder that does not acknowledge a DROP within drop_grace is stopped
(SIGSTOP) and the lease moves on; the daemon continues it (SIGCONT) when its turn comes."""
import os
import signal
import time
import unittest

from gshare_e2e import TestCase, overlaps


class GraceStopTest(TestCase):
    def test_unresponsive_holder_is_stopped_and_continued(self):
        h = self.harness(config={"drop_grace": "500ms", "quantum": "300ms"})
        h.start_daemon()
        a = h.start_fake(["--kernels", 30, "--kernel-ms", 30], name="a")
        pa = a.child_pid()
        h.wait_kernels(pa, 2)
        # A freezes while holding the lease: it cannot answer the DROP that B's request causes.
        os.kill(pa, signal.SIGSTOP)
        t_stop = time.monotonic_ns()
        b = h.start_fake(["--kernels", 20, "--kernel-ms", 30], name="b")
        pb = b.child_pid()

        def a_stopped_by_daemon():
            st = h.status()
            rec = next((j for j in st["jobs"] if j["name"] == "a"), None)
            return rec is not None and rec["id"] in st["gpus"][0]["stopped"]
        h.wait_for(a_stopped_by_daemon, 30, "the daemon to stop the unresponsive holder")
        h.assert_done(b, 20, timeout=60)
        # Nobody here sends SIGCONT: A completes only because the daemon continued it.
        h.assert_done(a, 30, timeout=60)

        ka, kb = h.ops("K", pa), h.ops("K", pb)
        self.assertEqual((len(ka), len(kb)), (30, 20))
        # A's kernel in flight when it froze lasts, in the fake, until A is continued; all of
        # A's later kernels take turns with B.
        later = [k for k in ka if k.start > t_stop]
        self.assertEqual(overlaps(later, kb), [])
        self.assertGreater(kb[0].start, t_stop)
        st = h.status()
        self.assertEqual(st["gpus"][0]["stopped"], [])
        self.assertEqual({j["name"]: j["state"] for j in st["jobs"]}, {"a": "COMPLETED", "b": "COMPLETED"})


if __name__ == "__main__":
    unittest.main()
