"""Issue 26: jobs on a machine of several GPUs, end to end on the fake driver modelling 4 GPUs
(FAKE_CUDA_DEVICES=4, the fake NVML on the daemon's LD_LIBRARY_PATH, `[queue] gpus = 4`):
  - placement: one-GPU jobs spread over the least loaded GPUs (one each under max_running 1), a
    fifth waits with reason Resources; a `--gpus 2` job gets two distinct GPUs as its devices 0
    and 1 (CUDA_VISIBLE_DEVICES holds their UUIDs);
  - gang lease: two `--gpus 2` jobs pinned to GPUs 0,1 and a one-GPU job on GPU 0, in exclusive
    mode: on each GPU the jobs' kernels never overlap, a gang job is granted both of its GPUs
    at once (it starts no kernel while another job runs on either) and holds both until it
    has drained both (no other job runs on GPU 0 while it still runs on GPU 1), and every
    job ends (no deadlock);
  - move: a `--memory checkpoint` job that sees every GPU (`--gpus 4`; the driver restores a
    process onto another GPU only then), suspended on GPU 0 and resumed with `--gpu 2`,
    finishes bit-exact, its kernels and device memory on physical GPU 2 from then on;
    `resume --gpu` naming no GPU, or of a job that sees one GPU, fails with one line and
    leaves the job suspended;
  - bad GPU requests (`--gpus 5`, `--gpu 0,0`, `--gpu 7`, `--gpus 2 --gpu 1`, ...) fail with one
    line and the usage exit status, and start nothing;
  - a GPU named by its UUID is the same GPU as by its index: the job sees it, it counts toward
    the same slot, and `resume --gpu UUID` moves a job there;
  - rebalance: two such movable jobs that do not fit together take turns on GPU 0 while a job
    keeps GPU 1 busy; once it ends, the daemon moves the waiting one to GPU 1 by itself (one
    log line), its kernels run there from then on, and both finish bit-exact; with
    `[scheduler] rebalance = false` nothing moves while they keep taking turns on GPU 0."""
import datetime
import os
import re
import unittest

from gshare_e2e import (FAKE_APP, FAKECUDA_DIR, FAKENVML_DIR, TestCase, overlaps, owner_switches,
                        proc_state)

GPUS = 4
MIB = 1 << 20
CYCLES = 60  # kernels of the job that moves
PAIR_CYCLES = 20  # kernels of each job of the pair that takes turns through checkpoints: enough
# that neither ends before both took turns while the other does its CPU work (a loaded machine)


def uuid_of(physical):
    """The fake driver's UUID text of physical GPU p (test/fake_cuda/README.md)."""
    return "GPU-46414b45-4750-552d-3030-3030303030%02x" % (0x30 + physical)


class MultiGpuTest(TestCase):
    def harness(self, config=None, queue=None, memory=None):
        q = {"gpus": GPUS}
        q.update(queue or {})
        h = super().harness(config=config, queue=q, memory=memory)
        h.env["FAKE_CUDA_DEVICES"] = str(GPUS)
        h.env["LD_LIBRARY_PATH"] = FAKECUDA_DIR + ":" + FAKENVML_DIR
        return h

    def running(self, h, job_id):
        """Job job_id's queue record once it runs and its pid is known."""
        def rec():
            r = h.queue_jobs().get(job_id)
            return r if r and r["state"] == "RUNNING" and r["pid"] else None
        return h.wait_for(rec, 30, "job %d running with a pid" % job_id)

    def devices_of(self, h, pid):
        return sorted({o.dev for o in h.ops("K", pid)})

    def test_placement_spreads_jobs_and_remaps_two_gpus(self):
        h = self.harness(queue={"max_running": 1})
        h.start_daemon()
        # Three kernels, then a long sleep: each job keeps its GPU slot until cancelled.
        app = [FAKE_APP, "--kernels", "3", "--kernel-ms", "20", "--sleep-ms", "60000"]
        ids = [h.submit("-J", "p%d" % i, "--", *app) for i in range(GPUS)]
        recs = {i: self.running(h, i) for i in ids}
        fifth = h.submit("-J", "p4", "--", *app)
        # One job per GPU, the lowest index first on ties.
        self.assertEqual([recs[i]["slot"] for i in ids], ["0", "1", "2", "3"], recs)
        for i in ids:
            self.assertEqual(recs[i]["gpus"], 1)
            pid = int(recs[i]["pid"])
            h.wait_kernels(pid, 3)
            self.assertEqual(self.devices_of(h, pid), [int(recs[i]["slot"])],
                             "job %d of slot %s" % (i, recs[i]["slot"]))
        h.wait_state(fifth, "PENDING")
        h.wait_for(lambda: h.queue_jobs()[fifth]["reason"] == "Resources", 10,
                   "job %d pending with reason Resources" % fifth)
        # Its slot frees when the job on GPU 2 ends: the fifth starts there.
        on2 = next(i for i in ids if recs[i]["slot"] == "2")
        self.assertEqual(h.gshare("cancel", str(on2)).returncode, 0)
        rec = self.running(h, fifth)
        self.assertEqual(rec["slot"], "2")
        h.wait_kernels(int(rec["pid"]), 3)
        self.assertEqual(self.devices_of(h, int(rec["pid"])), [2])

        # GPUs 0 and 2 stay busy: a job of two GPUs can only go to 1 and 3, and sees them
        # as its devices 0 and 1.
        for i in ids:
            if recs[i]["slot"] in ("1", "3"):
                self.assertEqual(h.gshare("cancel", str(i)).returncode, 0)
                h.wait_state(i, "CANCELLED", timeout=30)
        pair = h.start_run(["sh", "-c", "%s --device 0 --kernels 3 & echo pid0 $!; "
                            "%s --device 1 --kernels 3 & echo pid1 $!; wait" % (FAKE_APP, FAKE_APP)],
                           ["-J", "pair", "--gpus", "2"], name="pair")
        self.assertEqual(pair.wait(60), 0, pair.stderr + h.diagnostics())
        out = pair.stdout
        self.assertIn("fake_app: device 0 uuid %s" % uuid_of(1), out)
        self.assertIn("fake_app: device 1 uuid %s" % uuid_of(3), out)
        self.assertEqual(out.count("fake_app: done 3"), 2, out)
        pids = dict(line.split() for line in out.splitlines() if line.startswith("pid"))
        self.assertEqual(self.devices_of(h, int(pids["pid0"])), [1])
        self.assertEqual(self.devices_of(h, int(pids["pid1"])), [3])
        rec = h.job_record(lambda j: j.get("name") == "pair")
        self.assertEqual((rec["gpus"], rec["slot"], rec["state"]), (2, "1,3", "COMPLETED"), rec)
        self.assertIn("job %d: gang lease on GPUs 1,3" % rec["id"], self.daemon_log(h))
        # Every job numbered its GPU 0; status numbers each GPU as NVML (nvidia-smi) does.
        index = {g["uuid"]: g["index"] for g in h.status()["gpus"]}
        self.assertEqual(index, {uuid_of(p): p for p in range(GPUS)}, index)

    def test_gang_lease_takes_both_gpus_at_once(self):
        # Exclusive mode (the harness's default `sharing`): a GPU runs one job's kernels at a
        # time, and the lease changes hands every quantum.
        h = self.harness(config={"quantum": "200ms"})
        h.start_daemon()
        kernels, ms = 15, 20
        app = "%s --kernels %d --kernel-ms %d" % (FAKE_APP, kernels, ms)
        gang_cmd = ("%s --device 0 & echo pid0 $!; %s --device 1 & echo pid1 $!; wait" % (app, app))
        a = h.start_run(["sh", "-c", gang_cmd], ["-J", "a", "--gpus", "2", "--gpu", "0,1"], name="a")
        b = h.start_run(["sh", "-c", gang_cmd], ["-J", "b", "--gpu", "0,1"], name="b")
        c = h.start_fake(["--kernels", kernels, "--kernel-ms", ms], ["--gpu", "0"], name="c")
        for job in (a, b):
            self.assertEqual(job.wait(90), 0, "%s: %s\n%s" % (job.name, job.stderr, h.diagnostics()))
            self.assertEqual(job.stdout.count("fake_app: done %d" % kernels), 2, job.stdout)
        h.assert_done(c, kernels, timeout=90)

        def pids(job):
            return dict(line.split() for line in job.stdout.splitlines() if line.startswith("pid"))
        procs = {}  # pid -> (job, GPU it should run on)
        for job in (a, b):
            p = pids(job)
            procs[int(p["pid0"])] = (job.name, 0)
            procs[int(p["pid1"])] = (job.name, 1)
        procs[c.child_pid()] = ("c", 0)
        kern = h.ops("K")
        self.assertEqual(sorted({k.pid for k in kern}), sorted(procs), "unexpected processes")
        for k in kern:
            self.assertEqual(k.dev, procs[k.pid][1], "kernel of %s on the wrong GPU" % (k,))
        by_job = {n: [k for k in kern if procs[k.pid][0] == n] for n in ("a", "b", "c")}
        self.assertEqual({n: len(v) for n, v in by_job.items()},
                         {"a": 2 * kernels, "b": 2 * kernels, "c": kernels})
        # On each GPU, kernels of different jobs never overlap.
        for dev in (0, 1):
            on = {n: [k for k in v if k.dev == dev] for n, v in by_job.items()}
            for x, y in (("a", "b"), ("a", "c"), ("b", "c")):
                bad = overlaps(on[x], on[y])
                self.assertEqual(bad, [], "GPU %d: %s and %s overlap, first %s" % (dev, x, y, bad[:1]))
        # A gang is granted both GPUs at once: none of its kernels starts while another job
        # runs a kernel on either GPU (test_gang_drops_both_gpus_at_once checks the drop).
        for gang in ("a", "b"):
            others = [k for n, v in by_job.items() if n != gang for k in v]
            bad = [(k, o) for k in by_job[gang] for o in others if o.start <= k.start < o.end]
            self.assertEqual(bad, [], "%s started while another job ran, first %s" % (gang, bad[:1]))
            # ... and its two processes got the GPUs together.
            g0 = [k for k in by_job[gang] if k.dev == 0]
            g1 = [k for k in by_job[gang] if k.dev == 1]
            self.assertGreater(len(overlaps(g0, g1)), 0, "%s never ran on both GPUs at once" % gang)
        # The GPUs changed hands between the jobs (no job ran alone to its end first).
        switches = 0
        ordered = sorted(kern, key=lambda k: k.start)
        for i in range(1, len(ordered)):
            switches += procs[ordered[i].pid][0] != procs[ordered[i - 1].pid][0]
        self.assertGreaterEqual(switches, 3)
        for name in ("a", "b", "c"):
            rec = h.job_record(lambda j, n=name: j.get("name") == n)
            self.assertEqual(rec["state"], "COMPLETED", rec)
        rec_b = h.job_record(lambda j: j.get("name") == "b")
        self.assertEqual((rec_b["gpus"], rec_b["slot"]), (2, "0,1"), "--gpu 0,1 implies --gpus 2")
        log = self.daemon_log(h)
        self.assertIn("job %d: gang lease on GPUs 0,1" % rec_b["id"], log)

    def test_gang_drops_both_gpus_at_once(self):
        # Gang a's process on GPU 1 runs 70 ms kernels, the one on GPU 0 10 ms ones, so at the
        # end of each of a's turns GPU 0 drains first. c waits for GPU 0 only; it must not
        # start there while a still runs on GPU 1: the gang holds both until both are free.
        h = self.harness(config={"quantum": "200ms"})
        h.start_daemon()
        a = h.start_run(["sh", "-c", "%s --device 0 --kernels 60 --kernel-ms 10 & echo pid0 $!; "
                         "%s --device 1 --kernels 9 --kernel-ms 70 & echo pid1 $!; wait"
                         % (FAKE_APP, FAKE_APP)], ["-J", "a", "--gpus", "2", "--gpu", "0,1"],
                        name="a")
        h.wait_for(lambda: len(h.ops("K")) >= 2, 30, "gang a running")
        c = h.start_fake(["--kernels", 20, "--kernel-ms", 20], ["--gpu", "0"], name="c")
        self.assertEqual(a.wait(90), 0, a.stderr + h.diagnostics())
        h.assert_done(c, 20, timeout=90)
        pids = dict(line.split() for line in a.stdout.splitlines() if line.startswith("pid"))
        on1 = h.ops("K", int(pids["pid1"]), dev=1)
        c_ops = h.ops("K", c.child_pid(), dev=0)
        self.assertEqual((len(on1), len(c_ops)), (9, 20))
        self.assertGreaterEqual(owner_switches(h.ops("K", dev=0)), 2, "a and c did not take turns")
        bad = overlaps(on1, c_ops)
        self.assertEqual(bad, [], "c ran on GPU 0 while gang a still ran on GPU 1 (%d pairs), "
                         "first %s\n%s" % (len(bad), bad[:1], h.diagnostics()))

    def test_resume_moves_a_checkpointed_job_to_another_gpu(self):
        h = self.checkpoint_harness()
        a, job_id, pid = self.suspended_on_gpu0(h, ["--gpus", str(GPUS)])
        before = h.ops("K", pid)
        self.assertEqual({k.dev for k in before}, {0})
        # Refused by the daemon (an action that failed: 1), the job stays as it was.
        for gpu, word in (("9", '"9": no such GPU'), ("0,1", "0,1"), ("x", '"x"')):
            h.assert_error_line(h.gshare("resume", str(job_id), "--gpu", gpu), 1, word)
        self.assertEqual(h.queue_jobs()[job_id]["state"], "SUSPENDED")
        used = lambda dev: self.device_used(h, dev)
        r = h.gshare("resume", str(job_id), "--gpu", "2")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        h.wait_for(lambda: len(h.ops("K", pid)) > len(before), 30, "a kernel after the resume")
        self.assertEqual((used(0), used(2) > 0), (0, True), "its memory is charged to GPU 2")
        self.assert_exact(h, a)
        after = h.ops("K", pid)[len(before):]
        self.assertEqual(len(after) + len(before), CYCLES)
        self.assertEqual({k.dev for k in after}, {2}, "kernels after the move")
        self.assertEqual([used(d) for d in range(GPUS)], [0] * GPUS)
        log = self.daemon_log(h)
        self.assertRegex(log, r"pid %d moves from %s to %s" % (pid, uuid_of(0), uuid_of(2)))
        self.assertNotIn("restore of", log)

    def test_bad_gpu_requests_are_refused(self):
        h = self.harness()
        h.start_daemon()
        app = [FAKE_APP, "--kernels", "1"]
        cases = [(["--gpus", "5"], "5"), (["--gpu", "0,0"], "0"), (["--gpu", "7"], "7"),
                 (["--gpus", "2", "--gpu", "1"], "--gpu"), (["--gpus", "0"], "0"),
                 (["--gpu", "0,9"], "9"), (["--gpu", "GPU-46414b45-4750-552d-3030-303030303039"],
                                           "GPU-46414b45-4750-552d-3030-303030303039")]
        for opts, word in cases:
            with self.subTest(opts=opts):
                h.assert_error_line(h.gshare("submit", *opts, "--", *app), 2, word)
                h.assert_error_line(h.gshare("run", *opts, "--", *app), 125, word)
        self.assertEqual(h.queue_jobs(), {}, "a refused request left a job")
        self.assertEqual(h.ops(None), [], "a refused job ran")

    def test_gpus_named_by_uuid_are_the_same_gpus(self):
        # NVML spells a UUID "GPU-" and lowercase hex, and so must CUDA_VISIBLE_DEVICES.
        h = self.harness(queue={"max_running": 1})
        h.start_daemon()
        for spec, device, physical in ((uuid_of(2), 0, 2), ("%s,3" % uuid_of(1), 1, 3)):
            with self.subTest(gpu=spec):
                n = len(h.ops("K"))
                r = h.gshare("run", "--gpu", spec, "--", "sh", "-c",
                             'echo "visible $CUDA_VISIBLE_DEVICES"; exec "$0" "$@"',
                             FAKE_APP, "--device", str(device), "--kernels", "1")
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                self.assertIn("fake_app: device %d uuid %s" % (device, uuid_of(physical)), r.stdout)
                self.assertEqual({k.dev for k in h.ops("K")[n:]}, {physical})
        with self.subTest("GPU 2 by index and by UUID is one slot"):
            # Under max_running 1 the second job waits for the first.
            first = h.submit("--gpu", "2", "--", "sleep", "30")
            h.wait_state(first, "RUNNING")
            second = h.submit("--gpu", uuid_of(2), "--", "sleep", "30")
            rec = h.wait_for(lambda: (lambda r: r if r["state"] != "PENDING" or r["reason"] else None)(
                h.queue_jobs()[second]), 10, "job %d started or given a reason" % second)
            self.assertEqual((rec["state"], rec["reason"]), ("PENDING", "Resources"), rec)

    def test_resume_onto_a_gpu_named_by_uuid(self):
        h = self.checkpoint_harness()
        a, job_id, pid = self.suspended_on_gpu0(h, ["--gpus", str(GPUS)])
        n = len(h.ops("K", pid))
        r = h.gshare("resume", str(job_id), "--gpu", uuid_of(3))
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        self.assert_exact(h, a)
        self.assertEqual({k.dev for k in h.ops("K", pid)[n:]}, {3})

    def test_resume_refuses_to_move_a_job_that_sees_one_gpu(self):
        # The driver would refuse the restore (CUDA error 1) and the job would be lost: the
        # daemon refuses the move first, and the job resumes where it was.
        h = self.checkpoint_harness()
        a, job_id, pid = self.suspended_on_gpu0(h, ["--gpu", "0"])
        h.assert_error_line(h.gshare("resume", str(job_id), "--gpu", "2"), 1,
                            "sees 1 of the 4 GPUs")
        self.assertEqual(h.queue_jobs()[job_id]["state"], "SUSPENDED")
        n = len(h.ops("K", pid))
        self.assertEqual(h.gshare("resume", str(job_id)).returncode, 0)
        self.assert_exact(h, a)
        self.assertEqual({k.dev for k in h.ops("K", pid)[n:]}, {0})

    def test_rebalance_moves_a_waiting_job_to_a_gpu_that_went_idle(self):
        h, pair = self.pair_beside_busy_gpu1(rebalance=True)
        log = h.wait_for(lambda: (lambda t: t if "(rebalance)" in t else None)(self.daemon_log(h)),
                         120, "a rebalance line")
        m = re.search(r"job (\d+) moved from GPU 0 to GPU 1 \(rebalance\)", log)
        self.assertIsNotNone(m, log)
        moved = int(m.group(1))
        self.assertIn(moved, pair, "the line names one of the pair")
        self.assertEqual(log.count("(rebalance)"), 1, log)
        rec = h.job_record(lambda j: j.get("id") == moved) or {}
        if rec.get("state") == "RUNNING":
            self.assertEqual(rec.get("moves"), 1, rec)
        for job in pair.values():
            self.assert_exact(h, job, PAIR_CYCLES)
        stayed = pair[next(i for i in pair if i != moved)]
        # The moved job ran on GPU 0 (if it had run), then only on GPU 1; the other never left
        # GPU 0.
        devs = [k.dev for k in h.ops("K", pair[moved].child_pid())]
        self.assertEqual(len(devs), PAIR_CYCLES)
        first = devs.index(1)
        self.assertLessEqual(set(devs[:first]), {0}, devs)
        self.assertEqual(set(devs[first:]), {1}, devs)
        self.assertEqual({k.dev for k in h.ops("K", stayed.child_pid())}, {0})
        self.assertNotIn("restore of", self.daemon_log(h))
        self.assertEqual(self.device_used(h, 0), 0)

    def test_rebalance_off_moves_nothing(self):
        h, pair = self.pair_beside_busy_gpu1(rebalance=False)
        # Each job waits checkpointed once more with GPU 1 idle (the wait at which rebalance
        # moves one), or ends first (a slow machine can finish the pair's cycles meanwhile: an
        # ended job counts no more checkpoints), and at least one such wait
        # happened: a new checkpoint, or, when both ended, a restore that came at least 1 s
        # after GPU 1 went idle and after that job's last checkpoint (the job waited,
        # checkpointed, through many daemon ticks). The pair's turns through checkpoints take
        # long to finish here, so what is left of it is cancelled after that.
        before = {i: self.checkpoints(h, i) for i in pair}
        seen, ended = dict(before), set()

        def one_more_turn_each():
            for i in pair:
                rec = h.job_record(lambda j, i=i: j.get("id") == i)
                # status lists recent ended jobs too (their records, without `memory`)
                if rec is None or rec.get("state") not in ("PENDING", "RUNNING", "SUSPENDED"):
                    ended.add(i)
                else:
                    seen[i] = max(seen[i], (rec.get("memory") or {}).get("checkpoints", 0))
            turned = {i for i in pair if seen[i] > before[i]}
            if ended == set(pair):
                return turned or self.waited_checkpointed_after_idle(self.daemon_log(h), pair)
            return turned and turned | ended == set(pair)
        h.wait_for(one_more_turn_each, 120, "one more turn each")
        devs = {job.name: {k.dev for k in h.ops("K", job.child_pid())} for job in pair.values()}
        # GPU 0 only: under load both may still be checkpointed before their first kernel.
        self.assertLessEqual(set().union(*devs.values()), {0}, devs)
        log = self.daemon_log(h)
        self.assertNotIn("(rebalance)", log)
        self.assertNotIn("moves from", log)
        self.assert_checkpoint_handoffs_accounted(log)
        for i in set(pair) - ended:
            self.assertIn(h.gshare("cancel", str(i)).returncode, (0, 1))

    @staticmethod
    def waited_checkpointed_after_idle(log, pair):
        """Whether a job of `pair` was restored at least 1 s after the other job's cancel line
        (GPU 1 idle from then on) and after its own last checkpoint before that restore."""
        stamp = r"^\[(\d+-\d+-\d+ \d+:\d+:\d+\.\d+)\] gshare: "

        def at(m):
            return datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f")
        idle, last_checkpoint = None, {}
        for line in log.splitlines():
            m = re.match(stamp + r"job (\d+) CANCELLED", line)
            if m and int(m.group(2)) not in pair:
                idle = at(m)
            m = re.match(stamp + r"job (\d+): pid \d+ (checkpointed|restored) in", line)
            if not m or int(m.group(2)) not in pair:
                continue
            if m.group(3) == "checkpointed":
                last_checkpoint[int(m.group(2))] = at(m)
            elif idle is not None:
                since = max(idle, last_checkpoint.get(int(m.group(2)), idle))
                if (at(m) - since).total_seconds() >= 1.0:
                    return True
        return False

    def assert_checkpoint_handoffs_accounted(self, log):
        """Each handoff of the pair's turns names the checkpoint that made its room (the other
        job's, the last one before it) and the restore that ended it, with the times their own
        lines logged (docs/memory.md, "Handoff accounting"): the time is in its parts, not in
        `other`."""
        checkpoint_ms, restore_ms, seen = None, None, 0
        for line in log.splitlines():
            m = re.search(r"checkpointed in (\d+) ms", line)
            if m:
                checkpoint_ms = int(m.group(1))
            m = re.search(r"restored in (\d+) ms", line)
            if m:
                restore_ms = int(m.group(1))
            m = re.search(r"handoff \S+: job \d+ -> job \d+: drain \d+ ms, evicted \d+ bytes"
                          r"(?: \(checkpoints (\d+) ms\))?, swapped in \d+ bytes in (\d+) ms", line)
            if m:
                if m.group(1) is not None:
                    seen += 1
                    self.assertIsNotNone(checkpoint_ms, line)
                    self.assertLessEqual(abs(int(m.group(1)) - checkpoint_ms), 1, line)
                    self.assertIsNotNone(restore_ms, line)
                    self.assertLessEqual(abs(int(m.group(2)) - restore_ms), 1, line)
                checkpoint_ms, restore_ms = None, None
        self.assertGreater(seen, 0, "no handoff with a checkpoint:\n" + log)

    def checkpoints(self, h, job_id):
        rec = h.job_record(lambda j: j.get("id") == job_id) or {}
        return (rec.get("memory") or {}).get("checkpoints", 0)

    def pair_beside_busy_gpu1(self, rebalance):
        """Job c keeps GPU 1 busy (shared mode: it fits alone); jobs a and b (--gpus 4,
        --memory checkpoint, 150 MiB each of the 256 MiB GPU: they do not fit together) both
        use GPU 0 and take turns there, each checkpointed while the other runs. Once both were
        checkpointed, and nothing moved meanwhile, c is cancelled. Returns (h, {id: Job})."""
        # A 1 s quantum: a turn long enough for a cycle's kernel and copies (at 300 ms each
        # turn ends mid-cycle and the pair needs ~30 s for three kernels each).
        h = self.checkpoint_harness(config={"rebalance": rebalance, "quantum": "1s"},
                                    queue={"max_running": 4})
        # c's kernels keep GPU 1 busy on the fake GPU's clock (a 20 ms kernel every 2 ms), not
        # on the CPU, which the pair's checkpoints need on a loaded machine.
        c = h.submit("-J", "c", "--gpu", "1", "--", FAKE_APP, "--kernels", "1000000",
                     "--kernel-ms", "20", "--gap-ms", "2")
        rec_c = self.running(h, c)
        h.wait_kernels(int(rec_c["pid"]), 3)
        pair = {}
        for name in ("a", "b"):
            job = h.start_fake(["--kernels", 0, "--swap-check", 150 * MIB, "--cycles", PAIR_CYCLES,
                                "--gap-ms", 20], ["--gpus", str(GPUS), "--memory", "checkpoint"],
                               name=name)
            pair[h.job_record(lambda j, n=name: j.get("name") == n)["id"]] = job

        # Each was checkpointed at least once: the most checkpoints status showed, since a job
        # that ended (a loaded machine may finish one first) shows no more. One may not have run
        # a kernel yet (checkpointed as soon as it had set up, for the other's turn).
        seen = dict.fromkeys(pair, 0)

        def took_turns():
            for j in h.status()["jobs"]:
                if j.get("id") in seen:
                    seen[j["id"]] = max(seen[j["id"]], (j.get("memory") or {}).get("checkpoints", 0))
            return all(n >= 1 for n in seen.values())
        h.wait_for(took_turns, 120, "a and b were checkpointed (taking turns)")
        self.assertNotIn("(rebalance)", self.daemon_log(h), "moved while GPU 1 was busy")
        for job in pair.values():
            self.assertLessEqual({k.dev for k in h.ops("K", job.child_pid())}, {0}, job.name)
        self.assertEqual(h.gshare("cancel", str(c)).returncode, 0)
        h.wait_state(c, "CANCELLED", timeout=30)
        return h, pair

    # ---- a --memory checkpoint job on GPU 0 (test_checkpoint.py's setup) ----------------
    def checkpoint_harness(self, config=None, queue=None):
        settings = {"sharing": "auto", "quantum": "300ms"}
        settings.update(config or {})
        h = self.harness(config=settings, queue=queue, memory={"context_reserve": "1MiB"})
        h.env["FAKE_CUDA_DEVICE_FILE"] = os.path.join(h.tmp, "device")
        h.env["FAKE_CUDA_MEM_BYTES"] = str(256 * MIB)
        h.env["FAKE_CUDA_CHECKPOINT_DIR"] = h.tmp
        h.env["FAKE_CUDA_CHECKPOINT_US_PER_MIB"] = "1000"  # 40 MiB: 40 ms each way
        h.start_daemon()
        return h

    def device_used(self, h, dev):
        with open(h.env["FAKE_CUDA_DEVICE_FILE"], "rb") as f:
            f.seek(8 * dev)
            return int.from_bytes(f.read(8), "little")

    def suspended_on_gpu0(self, h, gpus):
        """Starts job a (options `gpus`, which put its device 0 on GPU 0; --memory checkpoint;
        a bit-exact swap check of CYCLES kernels), lets it run 5 kernels and suspends it;
        returns (Job, id, pid) once it is checkpointed and stopped."""
        a = h.start_fake(["--kernels", 0, "--swap-check", 40 * MIB, "--cycles", CYCLES,
                          "--gap-ms", 20], gpus + ["--memory", "checkpoint"], name="a")
        pid = a.child_pid()
        h.wait_kernels(pid, 5)
        job_id = h.job_record(lambda j: j.get("name") == "a")["id"]
        self.assertEqual(h.gshare("suspend", str(job_id)).returncode, 0)

        def stopped():
            rec = h.job_record(lambda j: j.get("id") == job_id) or {}
            return (rec.get("state") == "SUSPENDED" and (rec.get("memory") or {}).get("checkpointed")
                    and proc_state(pid) == "T" and self.device_used(h, 0) == 0)
        h.wait_for(stopped, 30, "job a checkpointed and stopped, its device bytes gone")
        return a, job_id, pid

    def assert_exact(self, h, a, cycles=CYCLES, timeout=120):
        rc = a.wait(timeout)
        self.assertEqual(rc, 0, "%s\n%s\n%s" % (a.stdout, a.stderr, h.diagnostics()))
        self.assertIn("fake_app: swap-check ok cycles=%d" % cycles, a.stdout)

    def daemon_log(self, h):
        with open(h.daemon_log) as f:
            return f.read()


if __name__ == "__main__":
    unittest.main()
