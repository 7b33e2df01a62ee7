"""Issue 23 item 3 (and issue 26 item 1): NVML asked inside a job answers as if the job were
alone, by both routes a program reaches NVML (dlopen + dlsym as pynvml does: nvml_probe;
linked as nvidia-smi-like programs are: nvml_probe_linked), on the fake driver and fake NVML
modelling 2 GPUs of FAKE_MEM bytes:
  - GPUs: a job on GPU 1 counts one GPU (nvmlDeviceGetCount, _v2), its handle 0 is GPU 1
    (by UUID) with index 0, and GPU 0, reached by its UUID, has no index in the job (NOT_FOUND);
    outside gshare the same program counts both GPUs;
  - memory (swap engine): total = the GPU less what another job holds there that cannot move
    (a `--memory off` job's allocations and context), used = the job's own allocations and
    context (the daemon's ledger), free = the rest, in nvmlMemory_t and nvmlMemory_v2_t alike;
    a process of the job that never touched CUDA asks it (the probe itself);
  - `--memory off`: the driver's own numbers (the whole GPU, everyone's use)."""
import os
import subprocess
import unittest

from gshare_e2e import BUILD, FAKE_APP, FAKECUDA_DIR, FAKENVML_DIR, TestCase

MIB = 1 << 20
FAKE_MEM = 4096 * MIB
CONTEXT = 256 * MIB
PROBES = [os.path.join(BUILD, "test", p) for p in ("nvml_probe", "nvml_probe_linked")]
NOT_FOUND = 6  # NVML_ERROR_NOT_FOUND


def uuid_of(physical):
    """The fake driver's UUID text of physical GPU p (test/fake_cuda/README.md)."""
    return "GPU-46414b45-4750-552d-3030-3030303030%02x" % (0x30 + physical)


def parse(text):
    """nvml_probe's output: (count_v2, count_v1), [per-GPU dict], {uuid: index result}."""
    counts, gpus, hidden = None, [], {}
    for line in text.splitlines():
        w = line.split()
        if w[:1] == ["count"]:
            counts = (int(w[1]), int(w[2]))
        elif w[:1] == ["gpu"]:
            gpus.append({"i": int(w[1]), "uuid": w[3], "index": int(w[5]), "total": int(w[7]),
                         "used": int(w[9]), "free": int(w[11]),
                         "v2": tuple(int(x) for x in w[13:17])})
        elif w[:1] == ["hidden"]:
            hidden[w[1].rstrip(":")] = int(w[2])
    return counts, gpus, hidden


class NvmlViewTest(TestCase):
    def harness(self):
        h = super().harness(queue={"gpus": 2, "max_running": 4},
                            memory={"context_reserve": "%dMiB" % (CONTEXT // MIB)})
        h.env["FAKE_CUDA_DEVICES"] = "2"
        h.env["FAKE_CUDA_MEM_BYTES"] = str(FAKE_MEM)
        h.env["FAKE_CUDA_DEVICE_FILE"] = os.path.join(h.tmp, "device")
        h.env["LD_LIBRARY_PATH"] = FAKECUDA_DIR + ":" + FAKENVML_DIR
        return h

    def holder(self, h, name, mib, memory):
        """A job on GPU 1 holding `mib` MiB (fake_app's leaked --swap-check buffers) until
        cancelled; returns its record once its memory is in the ledger."""
        job = h.start_run([FAKE_APP, "--swap-check", str(mib * MIB), "--cycles", "1",
                           "--leak-to-exit", "--sleep-ms", "60000"],
                          ["-J", name, "--gpu", "1", "--memory", memory], name=name)
        h.wait_for(lambda: "fake_app: done" in job.stdout, 30, name + "'s buffers")
        def rec():
            r = h.job_record(lambda j: j.get("name") == name)
            return r if r and r.get("memory", {}).get("allocated", 0) >= mib * MIB * 9 // 10 else None
        return job, h.wait_for(rec, 30, "%s's memory in the ledger" % name)

    def probe(self, h, memory):
        """Both probes in one job on GPU 1, while the job's fake_app holds 128 MiB there;
        returns ({probe: output}, the job's record)."""
        out = os.path.join(h.tmp, "probe-%s" % memory)
        script = ("%s --swap-check %d --cycles 1 --leak-to-exit --sleep-ms 60000 > %s.app & "
                  "until grep -q 'fake_app: done' %s.app; do sleep 0.05; done; "
                  "%s --hidden %s > %s.0 2>&1; %s --hidden %s > %s.1 2>&1; touch %s.done; wait"
                  % (FAKE_APP, 128 * MIB, out, out, PROBES[0], uuid_of(0), out, PROBES[1],
                     uuid_of(0), out, out))
        name = "probe-" + memory
        job = h.start_run(["sh", "-c", script], ["-J", name, "--gpu", "1", "--memory", memory],
                          name=name)
        h.wait_for(lambda: os.path.exists(out + ".done"), 30, "the probes of " + name)
        rec = h.job_record(lambda j: j.get("name") == name)
        outputs = {}
        for i, p in enumerate(PROBES):
            with open("%s.%d" % (out, i)) as f:
                outputs[os.path.basename(p)] = f.read()
        job.kill()
        return outputs, rec

    def test_a_job_sees_its_gpu_and_its_memory_alone(self):
        h = self.harness()
        h.start_daemon()
        # Outside gshare, NVML lists both GPUs.
        for p in PROBES:
            r = subprocess.run([p], env=h.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, timeout=30)
            self.assertEqual(r.returncode, 0, r.stdout)
            self.assertEqual(parse(r.stdout)[0], (2, 2), r.stdout)

        self.holder(h, "fixed", 512, "off")
        outputs, rec = self.probe(h, "swap")
        fixed = h.job_record(lambda j: j.get("name") == "fixed")
        others = fixed["memory"]["fixed"] + CONTEXT
        self.assertGreaterEqual(fixed["memory"]["fixed"], 500 * MIB, fixed)
        used = rec["memory"]["allocated"] + CONTEXT
        self.assertGreaterEqual(rec["memory"]["allocated"], 120 * MIB, rec)
        for probe, text in outputs.items():
            counts, gpus, hidden = parse(text)
            self.assertEqual(counts, (1, 1), probe + ":\n" + text)
            self.assertEqual(len(gpus), 1, probe + ":\n" + text)
            g = gpus[0]
            self.assertEqual((g["uuid"], g["index"]), (uuid_of(1), 0), probe)
            self.assertEqual(hidden, {uuid_of(0): NOT_FOUND}, probe)
            self.assertEqual((g["total"], g["used"], g["free"]),
                             (FAKE_MEM - others, used, FAKE_MEM - others - used),
                             probe + ":\n" + text + h.diagnostics())
            self.assertEqual(g["v2"], (FAKE_MEM - others, 0, FAKE_MEM - others - used, used),
                             probe)

        # Under --memory off other jobs' memory stays where it is: NVML's own numbers.
        outputs, _ = self.probe(h, "off")
        for probe, text in outputs.items():
            counts, gpus, _ = parse(text)
            self.assertEqual(counts, (1, 1), probe + ":\n" + text)
            g = gpus[0]
            self.assertEqual(g["total"], FAKE_MEM, probe + ":\n" + text)
            self.assertGreaterEqual(g["used"], (500 + 120) * MIB, probe + ":\n" + text)
            self.assertEqual(g["free"], FAKE_MEM - g["used"], probe)


if __name__ == "__main__":
    unittest.main()
