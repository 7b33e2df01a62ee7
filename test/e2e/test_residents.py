"""Memory follows priority: a high-priority service beside two lower jobs whose memory,
with its own, is more than the GPU holds. The GPU goes exclusive, but the service stays
resident: it holds the GPU beside the lower jobs' turns, which they take among themselves
with their memory swapped in and out, and its own memory is never evicted. Everything stays
bit-exact (fake_app --swap-check)."""
import json
import os
import re
import time
import unittest

from gshare_e2e import FAKE_APP, TestCase

MIB = 1 << 20
# With their slabs and pools on the GPU, a low job takes about 80 MiB and the service 60.
DEVICE = 192 * MIB  # the fake GPU: the service and one low job fit, all three do not
LOW = 60 * MIB
SERVICE = 20 * MIB


class ResidentTest(TestCase):
    def harness(self):
        h = super().harness(config={"sharing": "auto", "quantum": "1s", "stagger": False},
                            memory={"context_reserve": "1MiB"})
        h.env["FAKE_CUDA_DEVICE_FILE"] = os.path.join(h.tmp, "device")
        h.env["FAKE_CUDA_MEM_BYTES"] = str(DEVICE)
        h.env["FAKE_CUDA_KERNEL_MS"] = "20"
        return h

    def job(self, h, name, nbytes, cycles, gap_ms, priority, extra=()):
        argv = [FAKE_APP] + [str(a) for a in ["--kernels", 0, "--swap-check", nbytes,
                                              "--cycles", cycles, "--gap-ms", gap_ms, *extra]]
        return h.start_run(argv, ["-J", name, "--memory", "swap", "-p", str(priority)],
                           name=name)

    def assert_exact(self, h, job, cycles):
        rc = job.wait(180)
        self.assertEqual(rc, 0, "%s exited %s\n%s\n%s" % (job.name, rc, job.stderr,
                                                          h.diagnostics()))
        m = re.search(r"fake_app: swap-check ok cycles=(\d+)", job.stdout)
        self.assertIsNotNone(m, job.stdout)
        self.assertGreaterEqual(int(m.group(1)), cycles)

    def exclusive_holds(self, h):
        """Each job's leases held while the GPU was exclusive, {job id: [(start, end)]} in
        microseconds, from `gshare timeline`'s trace."""
        path = os.path.join(h.tmp, "trace.json")
        r = h.gshare("timeline", "-o", path)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(path) as f:
            doc = json.load(f)
        holds = {}
        for e in doc["traceEvents"]:
            if e["ph"] == "X" and e["name"] == "lease" and e["args"]["mode"] == "exclusive":
                holds.setdefault(e["args"]["job"], []).append((e["ts"], e["ts"] + e["dur"]))
        return holds

    def beside(self, h, ids):
        """The low jobs that held the GPU exclusively while the service held it too."""
        holds = self.exclusive_holds(h)
        return {job for job in (ids["a"], ids["b"])
                for s0, e0 in holds.get(job, []) for s1, e1 in holds.get(ids["service"], [])
                if s0 < e1 and s1 < e0}

    def test_the_service_stays_resident_while_the_others_take_turns(self):
        h = self.harness()
        h.start_daemon()
        # All three run until both low jobs had a turn beside the service (at most two
        # minutes): a turn lasts at least twice its switch, and a job's first eviction fills a
        # host pool block (1 GiB) first, seconds on a loaded machine, during which the other
        # low job may run all its cycles.
        stop = os.path.join(h.tmp, "stop")
        a = self.job(h, "a", LOW, 40, 0, 0, extra=("--stop-file", stop))
        b = self.job(h, "b", LOW, 40, 0, 0, extra=("--stop-file", stop))
        h.wait_for(lambda: len(h.status()["gpus"]) == 1, 30, "the low jobs on the GPU")
        service = self.job(h, "service", SERVICE, 40, 30, 10, extra=("--stop-file", stop))
        ids = {}
        swaps_out = {"a": 0, "b": 0, "service": 0}
        checked, deadline = 0.0, time.monotonic() + 120
        while any(j.poll() is None for j in (a, b, service)):
            for j in h.status()["jobs"]:
                ids.setdefault(j.get("name"), j["id"])
                if j.get("name") in swaps_out:
                    n = j.get("memory", {}).get("swaps_out", 0)
                    swaps_out[j["name"]] = max(swaps_out[j["name"]], n)
            if not os.path.exists(stop) and len(ids) == 3 and time.monotonic() - checked > 0.5:
                checked = time.monotonic()
                if checked > deadline or self.beside(h, ids) == {ids["a"], ids["b"]}:
                    open(stop, "w").close()
            time.sleep(0.05)
        self.assert_exact(h, service, 40)
        self.assert_exact(h, a, 40)
        self.assert_exact(h, b, 40)
        # Both low jobs had exclusive turns while the service held the GPU beside them: the
        # daemon's record of every lease (`gshare timeline`), not samples of `status`.
        self.assertEqual(self.beside(h, ids), {ids["a"], ids["b"]},
                         "turns beside the service: %s\n%s"
                         % (self.exclusive_holds(h), h.diagnostics()))
        with open(h.daemon_log) as f:
            log = f.read()
        self.assertIn("job %d stays resident" % ids["service"], log)
        # The low jobs' memory moved; the service's never left the GPU.
        self.assertGreater(swaps_out["a"] + swaps_out["b"], 0, swaps_out)
        self.assertEqual(swaps_out["service"], 0, swaps_out)


if __name__ == "__main__":
    unittest.main()
