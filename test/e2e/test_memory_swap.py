"""The swap engine end to end on the fake driver, whose device memory is shared by every
process (FAKE_CUDA_DEVICE_FILE), so a job that does not evict really leaves the next one
without room:
  - two jobs whose memory adds up to more than the GPU both finish bit-exact, one at a time
    (exclusive mode), with evictions and swap-ins counted in `gshare status`; their memory
    includes mappings they make themselves (cuMemCreate/cuMemMap, fake_app --swap-check);
    the one with GSHARE_TRACE_SWAP set traces its moves on stderr;
  - two jobs that fit run at once (shared mode) without a single swap;
  - a swap-in that fails half way rolls back, keeps the host copy and succeeds later;
  - a swap-in short of room that the daemon's ledger cannot see asks for it and finishes;
  - with a host budget too small for the swapped data, the second job waits with a
    visible reason and runs once the first is done;
  - one user's jobs swap into one host pool (the same memory file, from the daemon), unless a
    job asks for a pool of its own (GSHARE_HOST_POOL=process)."""
import os
import re
import subprocess
import unittest

from gshare_e2e import FAKE_APP, SHIM, TestCase, host_pool_files, overlaps

MIB = 1 << 20
DEVICE = 256 * MIB  # the fake GPU
JOB = 150 * MIB     # each job's memory: two do not fit, one does


class MemorySwapTest(TestCase):
    def harness(self, memory=None, sharing="auto", quantum="300ms", **kw):
        settings = {"context_reserve": "1MiB"}  # the fake's contexts take no memory
        settings.update(memory or {})
        h = super().harness(config={"sharing": sharing, "quantum": quantum}, memory=settings, **kw)
        h.share_fake_device(DEVICE)
        return h

    def swap_job(self, h, name, nbytes=JOB, cycles=12, gap_ms=0, env=None, engine="swap",
                 extra=()):
        args = ["--kernels", 0, "--swap-check", nbytes, "--cycles", cycles, "--gap-ms", gap_ms]
        args += list(extra)
        argv = [str(a) for a in args]
        job_env = dict(h.env)
        job_env.update(env or {})
        return h.start_run([FAKE_APP] + argv, ["-J", name, "--memory", engine], name=name,
                           env=job_env)

    def assert_swap_ok(self, h, job, cycles=12, timeout=120):
        rc = job.wait(timeout)
        self.assertEqual(rc, 0, "%s exited %s\nstdout: %s\nstderr: %s\n%s" % (
            job.name, rc, job.stdout, job.stderr, h.diagnostics()))
        self.assertIn("fake_app: swap-check ok cycles=%d" % cycles, job.stdout)

    def memory_of(self, h, name):
        rec = h.job_record(lambda j: j.get("name") == name and "memory" in j)
        return rec["memory"] if rec else {}

    def daemon_log(self, h):
        with open(h.daemon_log) as f:
            return f.read()

    def test_oversubscribed_pair_takes_turns_and_stays_exact(self):
        # A 1 s quantum: each job's 40 cycles need ~7 s of GPU, so they still take turns a
        # dozen times, without the ~45 handoffs (a third of a second each) of a 300 ms one.
        h = self.harness(quantum="1s")
        h.start_daemon()
        seen = {"a": {}, "b": {}}
        fixed = {"a": set(), "b": set()}  # every fixed-bytes figure seen while allocated
        # Job a's bulk is in 24 buffers: with the slabs and the job's own mappings an eviction
        # spans ~40 chunks, several batches of the engine's copy pipeline (16 chunks each).
        a = self.swap_job(h, "a", cycles=40, gap_ms=30, env={"GSHARE_TRACE_SWAP": "1"},
                          extra=("--pieces", 24))
        b = self.swap_job(h, "b", cycles=40, gap_ms=30)

        def snapshot():
            for name in ("a", "b"):
                mem = self.memory_of(h, name)
                if mem.get("allocated", 0) > 0:
                    fixed[name].add(mem.get("fixed"))
                if mem.get("swaps_in", 0) >= seen[name].get("swaps_in", 0):
                    seen[name] = mem or seen[name]
            return a.poll() is not None and b.poll() is not None
        h.wait_for(snapshot, 120, "both jobs to end")
        self.assert_swap_ok(h, a, cycles=40)
        self.assert_swap_ok(h, b, cycles=40)
        log = self.daemon_log(h)
        self.assertIn("exclusive mode", log)
        # Turning exclusive, the job already running kept the GPU instead of dropping it too.
        self.assertRegex(log, r"exclusive mode\n.*job \d+ keeps the GPU, exclusively")
        moved = re.findall(r"evicted (\d+) bytes, swapped in (\d+) bytes", log)
        self.assertTrue(any(int(e) > 0 and int(i) > 0 for e, i in moved),
                        "no handoff moved memory both ways:\n" + log)
        for name in ("a", "b"):
            self.assertGreater(seen[name].get("swaps_out", 0), 0, "%s: %s" % (name, seen))
            self.assertGreater(seen[name].get("bytes_in", 0), 0, "%s: %s" % (name, seen))
            # The job's own cuMemCreate memory is the engine's (swappable, and the first an
            # eviction takes); only what it shares stays resident, as fixed memory: the handle
            # it exported (2 MiB) and the buffer it gave a legacy IPC handle (4 MiB).
            self.assertIn(6 * MIB, fixed[name], "%s: %s" % (name, fixed))
            self.assertLessEqual(max(fixed[name]), 6 * MIB, "%s: %s" % (name, fixed))
        # Job a traced its moves (GSHARE_TRACE_SWAP): bytes, begin <= end, pool bytes.
        trace = re.findall(r"^gshare: trace (evict|swapin|pin) (\d+) ([\d.]+) ([\d.]+) pool (\d+)$",
                           a.stderr, re.M)
        self.assertEqual({t[0] for t in trace if int(t[1]) > 0} & {"evict", "swapin"},
                         {"evict", "swapin"}, a.stderr)
        self.assertTrue(all(float(t[2]) <= float(t[3]) for t in trace), trace)
        self.assertTrue(all(int(t[4]) > 0 for t in trace if t[0] == "evict" and int(t[1]) > 0))
        self.assertNotIn("gshare: trace", b.stderr)
        # Their kernels never overlapped: one job at a time.
        ops = h.ops("K")
        self.assertEqual(overlaps([o for o in ops if o.pid == a.child_pid()],
                                  [o for o in ops if o.pid == b.child_pid()]), [])
        # Everything was given back: the shared device counter is 0 again.
        with open(h.env["FAKE_CUDA_DEVICE_FILE"], "rb") as f:
            used = int.from_bytes(f.read(8), "little")
        self.assertEqual(used, 0, "device bytes still charged after both jobs ended")

    def test_one_users_jobs_share_one_host_pool(self):
        h = self.harness(quantum="500ms")
        h.start_daemon()
        a = self.swap_job(h, "a", cycles=15, gap_ms=30)
        b = self.swap_job(h, "b", cycles=15, gap_ms=30)
        own = self.swap_job(h, "own", nbytes=40 * MIB, cycles=15, gap_ms=30,
                            env={"GSHARE_HOST_POOL": "process"})
        pids = {j.name: j.child_pid() for j in (a, b, own)}
        pools = {}

        def both_mapped():
            for name, pid in pids.items():
                pools[name] = pools.get(name) or host_pool_files(pid)
            return bool(pools["a"]) and bool(pools["b"])
        h.wait_for(both_mapped, 90, "both jobs to map a host pool (they swap)")
        self.assertEqual(pools["a"], pools["b"], "one user's jobs got different pools")
        self.assertEqual(len(pools["a"]), 1, pools)
        for job in (a, b, own):
            self.assert_swap_ok(h, job, cycles=15)
        self.assertEqual(pools["own"], set(),
                         "a job that asked for its own pool mapped the shared one")
        moved = re.findall(r"evicted (\d+) bytes, swapped in (\d+) bytes", self.daemon_log(h))
        self.assertTrue(any(int(e) > 0 and int(i) > 0 for e, i in moved),
                        "no handoff moved memory")

    def test_pair_that_fits_shares_the_gpu(self):
        h = self.harness()
        h.start_daemon()
        a = self.swap_job(h, "a", nbytes=60 * MIB, cycles=10)
        b = self.swap_job(h, "b", nbytes=60 * MIB, cycles=10)
        shared = {"seen": False}

        def check():
            st = h.status()
            if any(g.get("mode") == "shared" and len(g.get("holding", [])) == 2 for g in st["gpus"]):
                shared["seen"] = True
            return a.poll() is not None and b.poll() is not None
        h.wait_for(check, 120, "both jobs to end")
        self.assert_swap_ok(h, a, cycles=10)
        self.assert_swap_ok(h, b, cycles=10)
        self.assertTrue(shared["seen"], "never saw both jobs holding in shared mode\n" + h.diagnostics())
        ops = h.ops("K")
        pids = sorted({o.pid for o in ops})
        self.assertEqual(len(pids), 2)
        both = overlaps([o for o in ops if o.pid == pids[0]], [o for o in ops if o.pid == pids[1]])
        self.assertNotEqual(both, [], "shared mode, yet the kernels never overlapped")
        self.assertNotIn("handoff", self.daemon_log(h))
        # Each job sees the GPU as if alone (asked before its first kernel, when it knows of no
        # other job's fixed memory): the whole device, less its own allocations and its
        # context (1/16 of this small device), whatever the other job holds.
        for job in (a, b):
            m = re.search(r"meminfo free=(\d+) total=(\d+)", job.stdout)
            self.assertIsNotNone(m, job.stdout)
            free, total = int(m.group(1)), int(m.group(2))
            self.assertEqual(total, DEVICE)
            allocated = int(re.search(r"bytes=(\d+)", job.stdout).group(1))
            self.assertLessEqual(free, DEVICE - allocated - DEVICE // 16)
            self.assertGreater(free, DEVICE - allocated - DEVICE // 16 - 40 * MIB)

    def test_failed_swap_in_rolls_back_and_recovers(self):
        h = self.harness()
        h.start_daemon()
        # a waits for room as long as it must (30 s): b may be slow to evict on a loaded
        # machine, and only b's swap-ins are meant to give up.
        a = self.swap_job(h, "a", cycles=15, gap_ms=30, env={"GSHARE_SWAP_WAIT_MS": "30000"})
        # b's 4th to 15th cuMemCreate fail, and a swap-in waits only 30 ms for room (then
        # asks the daemon for room and waits 30 ms more): its first swap-ins back some chunks,
        # then give up, keep what came back, and finish later. (Each failed swap-in takes one
        # or two cuMemCreate failures and a round trip of the GPU to a and back: 12 failures
        # make about ten of them; 30 made a dozen in twice the test's time.)
        b = self.swap_job(h, "b", cycles=15, gap_ms=30,
                          env={"FAKE_CUDA_FAIL_MEMCREATE_AFTER": "3",
                               "FAKE_CUDA_FAIL_MEMCREATE_COUNT": "12",
                               "GSHARE_SWAP_WAIT_MS": "30"})
        failed = {"a": 0, "b": 0}

        def snapshot():  # gshare status counts the swap-ins that did not finish
            for name in failed:
                failed[name] = max(failed[name], self.memory_of(h, name).get("swapins_failed", 0))
            return a.poll() is not None and b.poll() is not None
        h.wait_for(snapshot, 240, "both jobs to end")
        self.assert_swap_ok(h, a, cycles=15)
        self.assert_swap_ok(h, b, cycles=15)
        self.assertIn("swap-in on device 0 did not finish (no room on the GPU)", b.stderr,
                      "the failure never happened: " + b.stderr)
        self.assertGreater(failed["b"], 0, "status never counted b's failed swap-in")
        self.assertEqual(failed["a"], 0)
        self.assertIn("swap-in on GPU", self.daemon_log(h))
        # A swap-in that gave up waited for room the whole time it asked: the handoff says so.
        no_room = [line for line in self.daemon_log(h).splitlines()
                   if "its swap-in found no room" in line]
        self.assertTrue(no_room, "no handoff of b's failed swap-ins:\n" + self.daemon_log(h))
        for line in no_room:
            self.assertRegex(line, r"\(([1-9]\d*) ms of it waiting for room\)")

    # The hog must still hold its memory while the pair runs: its "done" line, in a file,
    # shows only at exit, so the test waits for the device counter instead. It sleeps 90 s
    # (killed once the pair is done): a pair that waited for it would end after that, and the
    # pair alone may take 30 s on a loaded machine.
    def test_swap_in_asks_for_room_the_ledger_cannot_see(self):
        # A process outside gshare holds 40 MiB of the device: the daemon's ledger does not
        # see it (as it does not see the driver's own memory on a real GPU), so the room it
        # makes for a swap-in falls short. The swap-in, stuck for a second, asks for more as a
        # demand and goes on; without that it would give up after its wait and warn that it
        # did not finish. The wait is 30 s, not the default 10 s: a job's first eviction
        # populates its host pool's first 1 GiB block, which on a loaded CI machine can keep
        # every chunk away for longer than 10 s.
        h = self.harness()
        hog = h.start([FAKE_APP, "--kernels", "0", "--swap-check", str(40 * MIB), "--cycles",
                       "1", "--leak-to-exit", "--sleep-ms", "90000"], name="hog")

        def hog_holds():  # the fake device's shared counter of bytes in use
            try:
                with open(h.env["FAKE_CUDA_DEVICE_FILE"], "rb") as f:
                    return int.from_bytes(f.read(8), "little") >= 40 * MIB
            except OSError:
                return False
        h.wait_for(hog_holds, 30, "the hog's allocation")
        h.start_daemon()
        wait = {"GSHARE_SWAP_WAIT_MS": "30000"}
        a = self.swap_job(h, "a", cycles=12, gap_ms=30, env=wait)
        b = self.swap_job(h, "b", cycles=12, gap_ms=30, env=wait)
        self.assert_swap_ok(h, a, cycles=12)
        self.assert_swap_ok(h, b, cycles=12)
        self.assertIsNone(hog.poll(), "the pair waited for the hog to exit")
        hog.proc.kill()
        for job in (a, b):
            self.assertNotIn("did not finish", job.stderr,
                             "%s: %s\nA: %s\nB: %s\n%s" % (job.name, job.stderr, a.stderr, b.stderr, self.daemon_log(h)))
        moved = re.findall(r"evicted (\d+) bytes, swapped in (\d+) bytes", self.daemon_log(h))
        self.assertTrue(any(int(e) > 0 and int(i) > 0 for e, i in moved),
                        "no handoff moved memory both ways:\n" + self.daemon_log(h))
        # The stuck swap-in's wait is its own part of the handoff, within the swap-in's time.
        waits = re.findall(r"swapped in \d+ bytes in (\d+) ms \((\d+) ms of it waiting for room\)",
                           self.daemon_log(h))
        self.assertTrue(waits, "no handoff counted a wait for room:\n" + self.daemon_log(h))
        for took, waited in waits:
            self.assertLessEqual(int(waited), int(took), waits)

    def test_host_budget_makes_the_second_job_wait(self):
        h = self.harness(memory={"host_budget": "16MiB"})
        h.start_daemon()
        a = self.swap_job(h, "a", cycles=40, gap_ms=20)
        h.wait_for(lambda: self.memory_of(h, "a").get("allocated", 0) > 0, 30, "a's memory")
        b = self.swap_job(h, "b", cycles=5)
        h.wait_for(lambda: self.memory_of(h, "b").get("waiting_for") == "HostMemoryBudget",
                   30, "b to wait for the host budget")
        self.assert_swap_ok(h, a, cycles=40)
        self.assert_swap_ok(h, b, cycles=5)
        a_ops = [o for o in h.ops("K") if o.pid == a.child_pid()]
        b_ops = [o for o in h.ops("K") if o.pid == b.child_pid()]
        self.assertGreater(min(o.start for o in b_ops), max(o.end for o in a_ops) - 1,
                           "b ran before a was done although nothing could be evicted")

    def test_managed_engine_prefetches_at_each_grant(self):
        # Exclusive mode forces DROPs: each job's managed memory is prefetched to the host when
        # it gives the GPU away and back to the GPU when it gets it again.
        h = self.harness(sharing="exclusive")
        h.start_daemon()
        jobs = [self.swap_job(h, name, nbytes=60 * MIB, cycles=20, gap_ms=20, engine="managed")
                for name in ("a", "b")]
        engines = set()

        def check():
            for name in ("a", "b"):
                engines.add(self.memory_of(h, name).get("engine"))
            return all(j.poll() is not None for j in jobs)
        h.wait_for(check, 120, "both jobs to end")
        for job in jobs:
            self.assert_swap_ok(h, job, cycles=20)
        self.assertIn("managed", engines)
        prefetches = [o for o in h.ops(None) if o.name.startswith("cuMemPrefetchAsync")]
        self.assertEqual({o.pid for o in prefetches}, {j.child_pid() for j in jobs},
                         "both jobs prefetch their managed memory")

    def test_job_larger_than_the_gpu_gets_a_clear_error(self):
        h = self.harness()
        h.start_daemon()
        job = self.swap_job(h, "big", nbytes=DEVICE + 64 * MIB, cycles=1)
        rc = job.wait(60)
        self.assertEqual(rc, 1, "stdout: %s\nstderr: %s" % (job.stdout, job.stderr))
        self.assertIn("error MemAlloc 2", job.stdout + job.stderr)
        self.assertIn("cannot fit", job.stderr)

    def test_exit_gives_the_memory_back_before_the_driver_does(self):
        # A job that leaves its buffers to exit: the shim's exit handler releases them (and
        # the lease) before the driver's own teardown would. Without a daemon the shim stays
        # out of it: the memory is still held when the driver's turn comes.
        used = re.compile(r"fake_app: device used at exit (-?\d+)")
        h = self.harness()
        h.start_daemon()
        job = self.swap_job(h, "leaver", cycles=3, extra=["--leak-to-exit"])
        self.assert_swap_ok(h, job, cycles=3)
        m = used.search(job.stdout)
        self.assertIsNotNone(m, job.stdout)
        # What stays is what the job shares with other processes (its exported handle, 2 MiB,
        # and its buffer with a legacy IPC handle, 4 MiB): another process may still map it.
        self.assertLessEqual(int(m.group(1)), 6 * MIB, job.stdout)

        env = dict(h.env, LD_PRELOAD=SHIM, GSHARE_SOCKET=os.path.join(h.tmp, "nobody.sock"),
                   GSHARE_MEMORY="swap")
        r = subprocess.run([FAKE_APP, "--kernels", "0", "--swap-check", str(JOB), "--cycles", "3",
                            "--leak-to-exit"], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=120, cwd=h.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        m = used.search(r.stdout)
        self.assertIsNotNone(m, r.stdout)
        self.assertGreaterEqual(int(m.group(1)), JOB, r.stdout)


if __name__ == "__main__":
    unittest.main()
