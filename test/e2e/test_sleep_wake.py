"""Serving engines' sleep mode (vLLM's CuMemAllocator, SGLang's memory saver) at the driver level:
test/gpu/cumem_pool's allocator maps weights and a KV cache with cuMemCreate + cuMemMap; sleep
copies the weights to pinned host memory and unmaps and releases every handle, wake maps new
handles at the same addresses and copies the weights back. cumem_pool_check cycles it on the fake
driver, bare and under `gshare run` with each memory engine, beside another job on one shared
fake GPU: the weights come back byte for byte, and a sleeping job's memory is really given back
(the GPU's free memory rises by what it released)."""
import os
import re
import subprocess
import unittest

from gshare_e2e import BUILD, TestCase

CHECK = os.path.join(BUILD, "test", "cumem_pool_check")
MIB = 1024 * 1024
# 24 MiB of weights in two allocations (10 + 16 MiB once rounded to the 2 MiB granularity) and a
# 40 MiB KV cache: 66 MiB released at each sleep.
RELEASED_MIB = 66
CYCLES = 6
ARGS = ["--cycles", str(CYCLES), "--weights-mib", "24", "--kv-mib", "40", "--hold-ms", "20"]


class SleepWakeTest(TestCase):
    def setUp(self):
        # Shared mode as shipped; the fake's contexts take no memory.
        self.h = self.harness(config={"sharing": "auto", "quantum": "300ms"},
                              memory={"context_reserve": "1MiB"})
        # One fake GPU of 512 MiB shared by every process of the test (FAKE_CUDA_DEVICE_FILE).
        self.h.share_fake_device(512 * MIB, kernel_ms=5)

    def assert_cycles(self, rc, out, err):
        self.assertEqual(rc, 0, "stdout: %s\nstderr: %s" % (out, err))
        self.assertIn("cumem_pool_check: ok %d cycles 24 MiB weights" % CYCLES, out, err)
        freed = [int(m) for m in re.findall(r"free asleep-awake (-?\d+) MiB", out)]
        self.assertEqual(len(freed), CYCLES, out)
        for mib in freed:
            self.assertGreaterEqual(mib, RELEASED_MIB, "asleep, the job's memory was not given "
                                    "back: %s" % out)

    def test_bare(self):
        r = subprocess.run([CHECK] + ARGS, env=self.h.env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                           timeout=120, cwd=self.h.tmp)
        self.assert_cycles(r.returncode, r.stdout, r.stderr)

    def test_under_each_engine_beside_a_job(self):
        self.h.start_daemon()
        # The neighbour's memory stays where it is (--memory off): a swap engine's neighbour is
        # evicted while a new job's memory is unknown and comes back later, and its 64 MiB then
        # land inside some cycle's asleep-awake difference. It runs until it is killed: one that
        # ended inside a cycle gave its 64 MiB back there (asleep-awake 2 MiB in a loaded run).
        neighbour = self.h.start_fake(["--kernels", "1000000", "--kernel-ms", "5",
                                       "--vmm", str(64 * MIB)],
                                      ["--memory", "off"], name="neighbour")
        try:
            for engine in ("swap", "checkpoint", "managed", "off"):
                with self.subTest(engine=engine):
                    job = self.h.start_run([CHECK] + ARGS,
                                           ["--memory", engine, "-J", "sw-" + engine])
                    rc = job.wait()
                    self.assert_cycles(rc, job.stdout, job.stderr + self.h.diagnostics())
                    self.assertIsNone(neighbour.proc.poll(), "the neighbour ended")
        finally:
            neighbour.kill()  # the job and what it started

    def test_a_failed_wake_names_the_call(self):
        # The driver refuses the wake's cuMemCreate: the check says which call failed, rc 1.
        env = dict(self.h.env, FAKE_CUDA_FAIL_MEMCREATE_AFTER="3")
        r = subprocess.run([CHECK] + ARGS, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                           timeout=120, cwd=self.h.tmp)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("cumem_pool_check: wake in cycle 0: cuMemCreate: 2", r.stderr)


if __name__ == "__main__":
    unittest.main()
