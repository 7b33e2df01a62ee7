"""Transparency: a job behaves the same with and without the shim, on every
route; and work submitted from another library's constructor, before main() and before the
shim initialised anything, is gated like any other."""
import os
import subprocess
import unittest

from gshare_e2e import BUILD, FAKE_APP, FAKE_APP_LINKED, SHIM, TestCase

CTOR_PROBE = os.path.join(BUILD, "test", "libctor_probe.so")


class TransparencyTest(TestCase):
    def run_app(self, h, app, args, preload):
        env = dict(h.env)
        if preload:
            env["LD_PRELOAD"] = SHIM
            env["GSHARE_SOCKET"] = h.socket
        return subprocess.run([app] + args, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=120, cwd=h.tmp)

    def test_same_output_and_work_with_and_without_the_shim(self):
        cases = [
            (FAKE_APP_LINKED, ["--route", "linked", "--memcpy", "--capture"]),
            (FAKE_APP, ["--route", "dlsym", "--memcpy", "--capture", "--per-thread"]),
            (FAKE_APP, ["--route", "gpa", "--memcpy", "--ex", "--gpa-version", "13000"]),
            (FAKE_APP, ["--route", "gpa", "--threads", "2", "--fork", "--per-thread"]),
        ]
        h = self.harness()
        h.start_daemon()
        for app, args in cases:
            with self.subTest(args=args):
                args = args + ["--kernels", "6", "--kernel-ms", "5"]
                before = len(h.ops(None))
                bare = self.run_app(h, app, args, preload=False)
                bare_ops = h.ops(None)[before:]
                before = len(h.ops(None))
                shim = self.run_app(h, app, args, preload=True)
                shim_ops = h.ops(None)[before:]
                self.assertEqual(bare.returncode, 0, bare.stderr)
                self.assertEqual(shim.returncode, bare.returncode, shim.stderr)
                self.assertEqual(shim.stdout, bare.stdout)
                self.assertEqual(shim.stderr, bare.stderr)  # the shim printed nothing
                self.assertEqual(sorted((o.kind, o.name) for o in shim_ops),
                                 sorted((o.kind, o.name) for o in bare_ops))

    def test_work_from_a_library_constructor_is_gated(self):
        h = self.harness(config={"quantum": "300ms"})
        other = h.start_fake(["--route", "dlsym", "--kernels", "30", "--kernel-ms", "20"])
        h.wait_kernels(other.child_pid(), 2)
        env = dict(h.env, LD_PRELOAD=CTOR_PROBE)
        probe = h.start_run(["/bin/true"], ["-J", "ctor"], env=env)
        self.assertEqual(probe.wait(120), 0, probe.stderr)
        self.assertIn("ctor_probe: launched 5", probe.stderr)
        h.assert_done(other, 30)
        probe_ops = [o for o in h.ops("K") if o.pid != other.child_pid()]
        self.assertEqual(len(probe_ops), 5)
        h.assert_exclusive(probe_ops, h.ops("K", other.child_pid()), min_switches=1)


if __name__ == "__main__":
    unittest.main()
