"""The fake driver's virtual memory management (cuMemAddressReserve/cuMemCreate/cuMemMap/...)
and stream-ordered pool allocation, through fake_app --vmm and --pool: bare (the fake alone) and
under `gshare run` (through the preloaded shim); plus FAKE_CUDA_FAIL_MEMCREATE_AFTER; and
fake_app --swap-check bare, on a device shared through FAKE_CUDA_DEVICE_FILE; and a legacy IPC
export (cuIpcGetMemHandle), and memory of the swap engine shared between two processes of a job
through it."""
import os
import struct
import subprocess
import unittest

from gshare_e2e import FAKE_APP, FAKE_APP_LINKED, TestCase

VMM_BYTES = 64 * 1024 * 1024 + 12345  # rounded up to the 2 MiB granularity
VMM_ROUNDED = 66 * 1024 * 1024
POOL_BYTES = 3 * 1024 * 1024 + 7
ARGS = ["--kernels", "2", "--kernel-ms", "5", "--vmm", str(VMM_BYTES), "--pool", str(POOL_BYTES)]
SWAP_BYTES = 160 * 1024 * 1024 + 999  # above the ~33 MiB of fixed buffers: the rest is 2 big ones
SWAP_ARGS = ["--kernels", "0", "--kernel-ms", "5", "--swap-check", str(SWAP_BYTES), "--cycles",
             "4", "--gap-ms", "10"]


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

    def test_legacy_ipc_export(self):
        # Bare, under --memory off and under the swap engine (the default) a cuMemAlloc
        # allocation gets a handle: the driver's, or gshare's for the engine's VMM memory
        # (docs/memory.md, "Legacy IPC of engine memory"). The managed engine's memory has
        # none: refused with CUDA_ERROR_NOT_SUPPORTED (801) and one line saying what to do.
        argv = [FAKE_APP, "--kernels", "1", "--kernel-ms", "1", "--ipc-export"]
        r = self.bare(argv)
        self.assertIn("fake_app: ipc export 0", r.stdout, r.stderr)
        self.h.start_daemon()
        for memory, result in (("off", 0), ("swap", 0), ("managed", 801)):
            with self.subTest(memory=memory):
                r = self.h.gshare("run", "--memory", memory, "--", *argv)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn("fake_app: ipc export %d" % result, r.stdout, r.stderr)
                told = [line for line in r.stderr.splitlines() if "cuIpcGetMemHandle" in line]
                self.assertEqual(len(told), 1 if result else 0, r.stderr)
                if told:
                    self.assertIn("--memory swap or off", told[0])

    def test_legacy_ipc_between_processes_of_one_job(self):
        # Two processes of one job (as torchrun's ranks): one exports swap-engine memory (a
        # region of three chunks and a block inside a slab), the other opens both handles,
        # reads every byte, writes over part of them and closes; the first sees those bytes.
        d = os.path.join(self.h.tmp, "ipc")
        os.mkdir(d)
        self.h.start_daemon()
        script = ('"$1" --kernels 1 --kernel-ms 1 --ipc-serve "$2" & '
                  '"$1" --kernels 1 --kernel-ms 1 --ipc-open "$2"; o=$?; '
                  '[ $o -eq 0 ] || kill $!; wait $!; s=$?; '
                  'exit $((o | s))')
        r = self.h.gshare("run", "--", "sh", "-c", script, "sh", FAKE_APP, d)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr + self.h.diagnostics())
        self.assertIn("fake_app: ipc serve 0 0", r.stdout)
        self.assertIn("fake_app: ipc open forged 400", r.stdout)  # CUDA_ERROR_INVALID_HANDLE
        self.assertIn("fake_app: ipc open read ok same yes", r.stdout)
        self.assertIn("fake_app: ipc open closed 1", r.stdout)  # not open any more
        self.assertIn("fake_app: ipc serve saw ok", r.stdout)
        self.assertNotIn("cuIpcGetMemHandle", r.stderr)

    def test_driver_allocation_waits_for_room(self):
        # The driver's own device memory finds the GPU full twice — a stream's, and a module
        # that lazy loading loads at a function's lookup: bare, and under --memory off, the job
        # fails at once; under the swap engine the shim asks for room and tries again, and the
        # job runs.
        argv = [FAKE_APP, "--kernels", "2", "--kernel-ms", "1"]
        self.h.start_daemon()
        for inject, call in (("FAKE_CUDA_FAIL_STREAMCREATE_COUNT", "StreamCreate"),
                             ("FAKE_CUDA_FAIL_GETFUNCTION_COUNT", "ModuleGetFunction")):
            env = dict(self.h.env, **{inject: "2"})
            r = self.bare(argv, env)
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertIn("fake_app: error %s 2" % call, r.stderr)
            for memory, rc in (("off", 1), ("swap", 0)):
                with self.subTest(call=call, memory=memory):
                    r = self.h.gshare("run", "--memory", memory, "--", *argv, env=env)
                    self.assertEqual(r.returncode, rc, r.stdout + r.stderr)
                    if rc == 0:
                        self.assertIn("fake_app: done 2", r.stdout)

    def test_memcreate_failure_injection(self):
        env = dict(self.h.env, FAKE_CUDA_FAIL_MEMCREATE_AFTER="0")
        r = self.bare([FAKE_APP] + ARGS, env)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("fake_app: error MemCreate 2", r.stderr)
        self.assertNotIn("vmm ok", r.stdout)
        # Through the shim to the driver (under the swap engine the engine's own cuMemCreate
        # would meet the failure, at the swap-in, and retry).
        job = self.h.start_run([FAKE_APP] + ARGS, ["--memory", "off"], env=env)
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

    def device_file_env(self, mem_bytes):
        path = os.path.join(self.h.tmp, "fake_device")
        env = dict(self.h.env, FAKE_CUDA_DEVICE_FILE=path, FAKE_CUDA_MEM_BYTES=str(mem_bytes),
                   FAKE_CUDA_CONTEXT_BYTES=str(4 * 1024 * 1024))
        return path, env

    @staticmethod
    def device_used(path):
        with open(path, "rb") as f:
            return struct.unpack("<Q", f.read(8))[0]  # device 0's counter

    def test_swap_check_bare(self):
        path, env = self.device_file_env(256 * 1024 * 1024)
        for app, route in ((FAKE_APP, "dlsym"), (FAKE_APP, "gpa"), (FAKE_APP_LINKED, "linked")):
            with self.subTest(route=route):
                r = self.bare([app, "--route", route] + SWAP_ARGS, env)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                self.assertIn("fake_app: swap-check ok cycles=4 bytes=%d" % SWAP_BYTES, r.stdout,
                              r.stderr)
                # Everything freed, and exit() gave back the context bytes.
                self.assertEqual(self.device_used(path), 0)

    def test_swap_check_device_too_small(self):
        path, env = self.device_file_env(128 * 1024 * 1024)
        r = self.bare([FAKE_APP] + SWAP_ARGS, env)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("fake_app: error MemAlloc 2", r.stderr)
        self.assertNotIn("swap-check ok", r.stdout)
        self.assertEqual(self.device_used(path), 0)


if __name__ == "__main__":
    unittest.main()
