"""A serving engine's start-up beside jobs that come and go (issue: serving engines; vllm#56830):
vLLM reads the GPU's free memory before and after its profiling run and refuses to start when it
rose, which happens bare whenever another process frees memory meanwhile. Under gshare the free
memory a job reads (cuMemGetInfo, through the shim) does not rise when another job ends during
its window (shim/memory/others_view.h); a process that starts afterwards sees the room at once.

The probe is Python reaching the fake driver through ctypes (dlopen + dlsym, as the CUDA
runtime does): it sets 2 MiB on the GPU and prints the free memory every 0.6 s until told to stop."""
import os
import re
import unittest

from gshare_e2e import TestCase

MIB = 1024 * 1024
PROBE = r"""
import ctypes, os, sys, time
cuda = ctypes.CDLL("libcuda.so.1")
dev, ctx = ctypes.c_int(), ctypes.c_void_p()
assert cuda.cuInit(0) == 0 and cuda.cuDeviceGet(ctypes.byref(dev), 0) == 0
assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
assert cuda.cuCtxSetCurrent(ctx) == 0
free, total, buf = ctypes.c_size_t(), ctypes.c_size_t(), ctypes.c_uint64()
assert cuda.cuMemAlloc_v2(ctypes.byref(buf), ctypes.c_size_t(2 << 20)) == 0
stop = sys.argv[1]
while True:
    # Work on the GPU (a lease, and with it what the others hold), then the reading.
    assert cuda.cuMemsetD8_v2(buf, ctypes.c_ubyte(1), ctypes.c_size_t(2 << 20)) == 0
    assert cuda.cuCtxSynchronize() == 0
    assert cuda.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)) == 0
    print("free", free.value, flush=True)
    if os.path.exists(stop):
        break
    time.sleep(0.6)  # past the lease's idle release (500 ms): each reading follows a new grant
"""


def readings(text):
    return [int(v) for v in re.findall(r"^free (\d+)$", text, re.M)]


class EngineStartupTest(TestCase):
    def test_free_memory_does_not_rise_when_a_neighbour_ends(self):
        # Each job's context counts 64 MiB against the others (the daemon's context_reserve).
        h = self.harness(config={"sharing": "auto", "quantum": "300ms"},
                         memory={"context_reserve": "64MiB"})
        h.share_fake_device(1024 * MIB, kernel_ms=5)
        h.start_daemon()
        # Two neighbours: what they hold that cannot move is their contexts, 2 x 64 MiB.
        neighbours = [h.start_fake(["--kernels", "100000", "--kernel-ms", "5"], name="nb%d" % i)
                      for i in (1, 2)]
        for n in neighbours:
            h.wait_kernels(n.child_pid())
        stop = os.path.join(h.tmp, "stop")
        probe = h.start_run(["python3", "-c", PROBE, stop], ["-J", "engine"], name="engine")
        h.wait_for(lambda: len(readings(probe.stdout)) >= 3, 30, "the engine's first readings")
        before = readings(probe.stdout)[0]

        for n in neighbours:
            n.proc.terminate()  # `gshare run` passes it on; the neighbour's lease ends
            n.wait()
        h.wait_for(lambda: not any(j.get("name", "").startswith("nb") and j.get("state") ==
                                   "RUNNING" for j in h.status()["jobs"]), 30, "the neighbours' end")
        seen = len(readings(probe.stdout))
        h.wait_for(lambda: len(readings(probe.stdout)) >= seen + 5, 30, "readings after it")

        # A process that starts now sees the neighbours' room (so the room really grew: it has
        # only the engine's context beside it) ...
        fresh = h.gshare("run", "-J", "fresh", "--", "python3", "-c", PROBE, "/")
        self.assertEqual(fresh.returncode, 0, fresh.stderr)
        self.assertGreaterEqual(readings(fresh.stdout)[0], before + 60 * MIB, fresh.stdout)
        # ... while the engine, measuring itself meanwhile, never saw free memory rise.
        open(stop, "w").close()
        self.assertEqual(probe.wait(), 0, probe.stderr)
        got = readings(probe.stdout)
        self.assertEqual(max(got), before, "free memory rose during the engine's window: %s"
                         % sorted(set(got)))


if __name__ == "__main__":
    unittest.main()
