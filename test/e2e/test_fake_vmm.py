"""The fake driver's virtual memory management (cuMemAddressReserve/cuMemCreate/cuMemMap/...)
and stream-ordered pool allocation, through fake_app --vmm and --pool: bare (the fake alone) and
under `gshare run` (through the preloaded shim); plus FAKE_CUDA_FAIL_MEMCREATE_AFTER."""
import subprocess
import unittest

from gshare_e2e import FAKE_APP, FAKE_APP_LINKED, TestCase

VMM_BYTES = 64 * 1024 * 1024 + 12345  # rounded up to the 2 MiB granularity
VMM_ROUNDED = 66 * 1024 * 1024
POOL_BYTES = 3 * 1024 * 1024 + 7
ARGS = ["--kernels", "2", "--kernel-ms", "5", "--vmm", str(VMM_BYTES), "--pool", str(POOL_BYTES)]


class FakeVmmTest(TestCase):
    def setUp(self):
        self.h = self.harness()

    def bare(self, argv, env=None):
        return subprocess.run(argv, env=env or self.h.env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                              timeout=120, cwd=self.h.tmp)

    def assert_ok(self, rc, out, err):
        self.assertEqual(rc, 0, "stdout: %s\nstderr: %s" % (out, err))
        self.assertIn("fake_app: vmm ok %d" % VMM_ROUNDED, out, err)
        self.assertIn("fake_app: pool ok", out, err)
        self.assertIn("fake_app: done 2", out, err)

    def test_bare_all_routes(self):
        for app, routes in ((FAKE_APP, ("dlsym", "gpa")), (FAKE_APP_LINKED, ("linked",))):
            for route in routes:
                for extra in ([], ["--per-thread"]):
                    with self.subTest(route=route, extra=extra):
                        r = self.bare([app, "--route", route] + extra + ARGS)
                        self.assert_ok(r.returncode, r.stdout, r.stderr)

    def test_under_gshare_run(self):
        for route in ("dlsym", "gpa"):
            with self.subTest(route=route):
                job = self.h.start_fake(["--route", route] + ARGS)
                rc = job.wait()
                self.assert_ok(rc, job.stdout, job.stderr + self.h.diagnostics())
        job = self.h.start_fake(["--route", "linked"] + ARGS, linked=True)
        rc = job.wait()
        self.assert_ok(rc, job.stdout, job.stderr + self.h.diagnostics())

    def test_memcreate_failure_injection(self):
        env = dict(self.h.env, FAKE_CUDA_FAIL_MEMCREATE_AFTER="0")
        r = self.bare([FAKE_APP] + ARGS, env)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("fake_app: error MemCreate 2", r.stderr)
        self.assertNotIn("vmm ok", r.stdout)
        job = self.h.start_run([FAKE_APP] + ARGS, env=env)
        self.assertEqual(job.wait(), 1, job.stdout + job.stderr)
        self.assertIn("fake_app: error MemCreate 2", job.stderr)
        # One call allowed: the app's single cuMemCreate succeeds.
        r = self.bare([FAKE_APP] + ARGS, dict(self.h.env, FAKE_CUDA_FAIL_MEMCREATE_AFTER="1"))
        self.assert_ok(r.returncode, r.stdout, r.stderr)

    def test_memcreate_beyond_device_memory(self):
        env = dict(self.h.env, FAKE_CUDA_MEM_BYTES=str(32 * 1024 * 1024))
        r = self.bare([FAKE_APP] + ARGS, env)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("fake_app: error MemCreate 2", r.stderr)


if __name__ == "__main__":
    unittest.main()
