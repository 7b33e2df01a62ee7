"""Fork safety: a job that forks a CUDA-free child (like a DataLoader worker) after it
initialised CUDA still shares the GPU correctly, and so does its partner."""
import os
import sys
import unittest

from gshare_e2e import TestCase

# A CUDA job in Python (ctypes) that forks while it holds the lease, i.e. with the shim's
# connection open and its lease thread running, which fake_app --fork (forking before its
# first launch) does not reach. The child touches no CUDA and exits through exit(), so the
# shim's atfork and exit paths run in it. Prints "forker: done N" like fake_app.
FORKER = r"""
import ctypes, os, sys, time
from ctypes import byref, c_int, c_uint, c_void_p
cu = ctypes.CDLL("libcuda.so.1")
def check(r, what):
    if r != 0:
        sys.exit("forker: %s failed: %d" % (what, r))
cu.cuLaunchKernel.argtypes = [c_void_p] + [c_uint] * 7 + [c_void_p, c_void_p, c_void_p]
dev, ctx, mod, fn = c_int(), c_void_p(), c_void_p(), c_void_p()
check(cu.cuInit(0), "cuInit")
check(cu.cuDeviceGet(byref(dev), 0), "cuDeviceGet")
check(cu.cuDevicePrimaryCtxRetain(byref(ctx), dev), "retain")
check(cu.cuCtxSetCurrent(ctx), "set")
check(cu.cuModuleLoadData(byref(mod), b"fake cubin"), "load")
check(cu.cuModuleGetFunction(byref(fn), mod, b"sleep_kernel"), "function")
ms = c_uint(int(sys.argv[2]))
params = (c_void_p * 1)(ctypes.cast(byref(ms), c_void_p))
n, children = int(sys.argv[1]), []
for i in range(n):
    check(cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, params, None), "launch")
    check(cu.cuCtxSynchronize(), "sync")
    if i % 8 == 3:
        pid = os.fork()
        if pid == 0:
            time.sleep(0.2)
            sys.exit(0)
        children.append(pid)
for pid in children:
    _, status = os.waitpid(pid, 0)
    if status != 0:
        sys.exit("forker: child status %d" % status)
print("forker: done %d" % n, flush=True)
"""

KERNELS = 25
QUANTUM = ["--quantum", "200ms"]


class ForkTest(TestCase):
    def check(self, fork_args, linked=False):
        h = self.harness(census=True)
        h.start_daemon()
        args = ["--kernels", KERNELS, "--kernel-ms", 30]
        a = h.start_fake(args + ["--fork"] + fork_args, QUANTUM, linked=linked, name="forker")
        b = h.start_fake(args + ["--route", "dlsym"], QUANTUM, name="other")
        h.assert_done(a, KERNELS)
        h.assert_done(b, KERNELS)
        self.assertNotIn("gshare:", a.stderr, "the shim complained in the forking job")
        ka, kb = h.ops("K", a.child_pid()), h.ops("K", b.child_pid())
        self.assertEqual((len(ka), len(kb)), (KERNELS, KERNELS))
        # Only the two jobs ran anything: the forked child launched nothing.
        self.assertEqual({o.pid for o in h.ops(None)}, {a.child_pid(), b.child_pid()})
        h.assert_exclusive(ka, kb, min_switches=2)
        # The shim counted every launch of the parent.
        export = "cuLaunchKernel" + ("_ptsz" if "--per-thread" in fork_args else "")
        self.assertEqual(h.census_counts(a.child_pid()).get(export, 0), KERNELS)
        # Both jobs' records show clean exits.
        for name in ("forker", "other"):
            rec = h.job_record(lambda j: j["name"] == name)
            self.assertEqual((rec["state"], rec["exit_code"]), ("COMPLETED", 0))

    def test_fork_dlsym(self):
        self.check(["--route", "dlsym"])

    def test_fork_linked_per_thread(self):
        self.check(["--route", "linked", "--per-thread"], linked=True)

    def test_fork_while_holding_the_lease(self):
        h = self.harness(census=True)
        h.start_daemon()
        script = os.path.join(h.tmp, "forker.py")
        with open(script, "w") as f:
            f.write(FORKER)
        a = h.start_run([sys.executable, script, "30", "30"], QUANTUM + ["-J", "forker"], name="forker")
        pa = a.child_pid()
        b = h.start_fake(["--kernels", 30, "--kernel-ms", 30], QUANTUM, name="other")
        self.assertEqual(a.wait(120), 0, a.stderr)
        self.assertIn("forker: done 30", a.stdout)
        self.assertNotIn("gshare:", a.stderr, "the shim complained in the forking job")
        h.assert_done(b, 30)
        ka, kb = h.ops("K", pa), h.ops("K", b.child_pid())
        self.assertEqual((len(ka), len(kb)), (30, 30))
        self.assertEqual({o.pid for o in h.ops(None)}, {pa, b.child_pid()})
        h.assert_exclusive(ka, kb, min_switches=2)
        self.assertEqual(h.census_counts(pa).get("cuLaunchKernel"), 30)
        # Each of the 4 children wrote its own census at exit, and counted none of the parent's
        # launches (the atfork handler reset the counts).
        prefix = os.path.basename(h.census) + "."
        pids = {int(n[len(prefix):]) for n in os.listdir(h.tmp) if n.startswith(prefix)}
        child_pids = pids - {pa, b.child_pid()}
        self.assertEqual(len(child_pids), 4, sorted(pids))
        for c in child_pids:
            self.assertEqual(h.census_counts(c), {}, "census of child %d" % c)
        # The children were not taken for jobs of their own, and both jobs ended cleanly.
        jobs = {j["name"]: j for j in h.status()["jobs"]}
        self.assertEqual(sorted(jobs), ["forker", "other"])
        self.assertEqual([jobs[n]["state"] for n in ("forker", "other")], ["COMPLETED"] * 2)


if __name__ == "__main__":
    unittest.main()
