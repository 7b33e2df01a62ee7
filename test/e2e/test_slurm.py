"""Issue 25: gshare under a real Slurm. A single-node cluster from Debian's packages (munged,
slurmctld, slurmd on localhost, private paths and ports) has one GPU, backed by the fake
driver, cut into shards (gres/shard, AutoDetect off, a device file made here). Slurm's
TaskProlog, Prolog and Epilog call `gshare slurm task-prolog|prolog|epilog`, as docs/slurm.md
deploys them, beside a `gshare daemon --system`. Two users (useradd) submit shard jobs with
sbatch from cron's bare environment; their jobs never set anything of gshare's.

Shown: both users' steps join gshare with their Slurm job id (status --json); a step of the
partition the config ranks higher takes the GPU from the lower one at once and keeps it until
done (exclusive mode: no kernels overlap); when the jobs fit they share the GPU (kernels
overlap); scancel ends a step's lease at once and the Epilog leaves no job, lease or memory
behind; a task prolog outside Slurm joins nothing, and a user cannot speak as the Prolog.
Needs root and Debian's slurmctld, slurmd, slurm-client and munge (CI installs them)."""
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

from gshare_e2e import FAKE_APP, FAKECUDA_DIR, GSHARE, MARKER, fmt_ops, overlaps
from system_case import SystemDaemonCase
from slurm_cluster import SlurmCluster

USERS = ("gshare25a", "gshare25b")
LOW = 300  # kernels of 30 ms: 9 s of work
SLURM_BINARIES = ("munged", "slurmctld", "slurmd", "sbatch", "scancel", "squeue")


def have_slurm():
    return os.geteuid() == 0 and all(shutil.which(b) or os.path.exists("/usr/sbin/" + b)
                                     for b in SLURM_BINARIES)


@unittest.skipUnless(have_slurm(), "needs root and Debian's slurmctld, slurmd, slurm-client, munge")
@unittest.skipUnless(shutil.which("useradd") and shutil.which("runuser"), "needs useradd, runuser")
class SlurmTest(SystemDaemonCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster = SlurmCluster(tempfile.mkdtemp(prefix="gshare-slurm-"), GSHARE, USERS)
        try:
            cls.cluster.start()
        except Exception:
            cls.cluster.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.cluster.stop()

    def start(self, config, system=""):
        self.setup_system(USERS, config, system)
        self.a, self.b = self.users
        self.cluster.set_target("--config %s" % self.config,
                                "export GSHARE_SYSTEM_SOCKET=%s\n" % self.socket)
        self.start_system()

    def sbatch(self, user, partition, script_body, kernels, extra=()):
        """Submits `script_body` as `user` with one shard of the GPU; returns (slurm job id,
        file where the job writes its pid, its output file)."""
        home = self.homes[user.pw_name]
        tag = "%s-%d" % (partition, len(os.listdir(home)))
        pid_file = os.path.join(home, tag + ".pid")
        out = os.path.join(home, tag + ".out")
        script = os.path.join(home, tag + ".sh")
        with open(script, "w") as f:
            f.write("#!/bin/sh\necho $$ > %s\n%s\n" % (pid_file, script_body if kernels is None else script_body % kernels))
        os.chmod(script, 0o755)
        os.chown(script, user.pw_uid, user.pw_gid)
        env = {"HOME": home, "PATH": "/usr/bin:/bin", MARKER: self.h.tmp,
               "LD_LIBRARY_PATH": FAKECUDA_DIR, "FAKE_CUDA_LOG": self.h.log}
        env.update(self.cluster.client_env())
        # A sanitized gshare (CI) in a task that inherits the shim in LD_PRELOAD (an srun step
        # inside a batch step) needs the options the harness gives its own processes.
        env.update({k: os.environ[k] for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS")
                    if k in os.environ})
        argv = ["runuser", "-u", user.pw_name, "--", "env", "-i"]
        argv += ["%s=%s" % kv for kv in env.items()]
        argv += ["sbatch", "--parsable", "-p", partition, "--gres=shard:1", "-o", out]
        argv += list(extra) + [script]
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=60, cwd=home)
        self.assertEqual(r.returncode, 0, r.stderr + self.cluster.logs())
        return int(r.stdout.strip().split(";")[0]), pid_file, out

    def wait_file(self, path, timeout=60):
        def ready():
            try:
                with open(path) as f:
                    return f.read().strip() or None
            except OSError:
                return None
        return self.h.wait_for(ready, timeout, path + "\n" + self.cluster.logs() + self.log())

    def wait_slurm_done(self, job, timeout=60):
        def done():
            r = subprocess.run(["squeue", "-h", "-j", str(job), "-o", "%T"], env=self.cluster.env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            return r.stdout.strip() in ("", "COMPLETED") or "Invalid job id" in r.stdout
        try:
            self.h.wait_for(done, timeout, "Slurm job %d to end" % job)
        except AssertionError as e:
            state = subprocess.run("squeue -o '%i %T %r'; sinfo -N -o '%N %t %E'", shell=True,
                                   env=self.cluster.env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True).stdout
            raise AssertionError("%s\n%s\n%s" % (e, state, self.cluster.logs())) from None

    def status(self):
        r = subprocess.run([GSHARE, "--config", self.config, "status", "--json"],
                           env=dict(self.h.env, GSHARE_SYSTEM_SOCKET=self.socket),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def slurm_jobs(self, status=None):
        """gshare's jobs of Slurm steps in status --json: {slurm job id: job}."""
        jobs = (status or self.status())["jobs"]
        return {j["slurm_job_id"]: j for j in jobs if j.get("kind") == "slurm"}

    def assert_nothing_left(self):
        """No gshare job of a Slurm step is running, and no GPU lease or memory is held."""
        def clear():
            s = self.status()
            running = [j for j in self.slurm_jobs(s).values() if j["state"] == "RUNNING"]
            held = [g for g in s["gpus"] if g.get("holder") is not None or g.get("waiters")]
            return s if not running and not held else None
        s = self.h.wait_for(clear, 10, "no Slurm step left in gshare\n" + self.log())
        for g in s["gpus"]:
            self.assertFalse(g.get("memory", {}).get("jobs"), json.dumps(g))

    def test_priority_exclusive_scancel_and_epilog(self):
        self.start('[scheduler]\nsharing = "exclusive"\nquantum = "60s"\n[queue]\ngpus = 1\n'
                   '[slurm.partition_priority]\ninteractive = 10\n'
                   # The Prolog asks scontrol for the QOS, which this cluster (no accounting)
                   # does not have: the partition's entry holds.
                   '[slurm.qos_priority]\nhigh = 50\n')
        body = "exec %s --kernels %%d --kernel-ms 30" % FAKE_APP
        # Long enough to be still under way when Slurm has started the second job (~1-2 s).
        low, low_pid_file, low_out = self.sbatch(self.a, "batch", body, LOW)
        low_pid = int(self.wait_file(low_pid_file))
        self.h.wait_kernels(low_pid, 5)
        high, high_pid_file, high_out = self.sbatch(self.b, "interactive", body, 10)
        high_pid = int(self.wait_file(high_pid_file))
        self.h.wait_kernels(high_pid, 1)
        steps = self.slurm_jobs()
        self.assertEqual(set(steps), {low, high}, json.dumps(steps))
        self.assertEqual((steps[low]["slurm_step"], steps[low]["priority"]), ("batch", 0))
        self.assertEqual((steps[high]["slurm_step"], steps[high]["priority"]), ("batch", 10))
        self.assertEqual(steps[low]["uid"], self.a.pw_uid)
        self.assertEqual(steps[high]["uid"], self.b.pw_uid)
        self.wait_slurm_done(high)
        self.wait_slurm_done(low, timeout=90)
        self.assertIn("fake_app: done 10", self.wait_file(high_out))
        self.assertIn("fake_app: done %d" % LOW, self.wait_file(low_out))
        lo, hi = self.h.ops("K", low_pid), self.h.ops("K", high_pid)
        self.assertEqual((len(lo), len(hi)), (LOW, 10))
        self.assertEqual(overlaps(lo, hi), [], fmt_ops(lo + hi))
        # From the high step's first kernel to its last, no low kernel starts.
        first, last_end = hi[0].start, max(o.end for o in hi)
        self.assertEqual([o for o in lo if first <= o.start < last_end], [], fmt_ops(lo + hi))
        self.assertGreater(len([o for o in lo if o.start >= last_end]), 0, "low was not preempted")
        self.assert_nothing_left()

        # scancel: the step's processes die, its lease goes at once, the Epilog ends the job.
        long_job, long_pid_file, _ = self.sbatch(self.a, "batch", body, 100000)
        long_pid = int(self.wait_file(long_pid_file))
        self.h.wait_kernels(long_pid, 3)
        holder = self.status()["gpus"][0]["holder"]
        self.assertEqual(holder, self.slurm_jobs()[long_job]["id"])
        subprocess.run(["scancel", str(long_job)], env=self.cluster.env, check=True)
        cancelled = time.monotonic()
        self.h.wait_for(lambda: self.status()["gpus"][0]["holder"] is None, 5,
                        "the lease to go after scancel\n" + self.log())
        self.assertLess(time.monotonic() - cancelled, 5)
        self.wait_slurm_done(long_job)
        self.assert_nothing_left()
        ended = self.as_user(self.a, "queue", "-a", "--json", check_rc=0)
        states = {j["slurm_job_id"]: j["state"] for j in json.loads(ended.stdout)["jobs"]
                  if j.get("kind") == "slurm"}
        self.assertEqual(states, {low: "COMPLETED", high: "COMPLETED", long_job: "COMPLETED"})

    def test_shared_when_it_fits_and_no_impersonation(self):
        self.start("[queue]\ngpus = 1\n")
        # Both steps' kernels start together, however late Slurm starts the second one.
        starts = os.path.join(self.h.tmp, "starts")
        os.mkdir(starts)
        os.chmod(starts, 0o1777)
        start = os.path.join(starts, "go")
        body = "exec %s --kernels %%d --kernel-ms 30 --start-file %s" % (FAKE_APP, start)
        a_job, a_pid_file, a_out = self.sbatch(self.a, "batch", body, 40)
        b_job, b_pid_file, b_out = self.sbatch(self.b, "batch", body, 40)
        a_pid, b_pid = int(self.wait_file(a_pid_file)), int(self.wait_file(b_pid_file))
        self.h.start_together(start, 2)
        self.wait_slurm_done(a_job)
        self.wait_slurm_done(b_job)
        self.assertIn("fake_app: done 40", self.wait_file(a_out))
        self.assertIn("fake_app: done 40", self.wait_file(b_out))
        a_ops, b_ops = self.h.ops("K", a_pid), self.h.ops("K", b_pid)
        self.assertEqual((len(a_ops), len(b_ops)), (40, 40))
        self.assertGreater(len(overlaps(a_ops, b_ops)), 0,
                           "the steps fit, yet never ran at once\n" + fmt_ops(a_ops + b_ops))
        self.assert_nothing_left()

        # An srun step's tasks join one job of their own step, apart from the batch step's.
        # (The srun step would inherit the batch step's LD_PRELOAD; CI's sanitized gshare, run as
        # its task prolog with the shim preloaded, hangs there, so the step starts without it,
        # as a step launched from outside a gshare task does.)
        # Inside the batch step, `gshare queue` reaches the system daemon through the
        # GSHARE_SOCKET its task prolog exported (the task is not told where the system socket
        # is) and lists the step's own job, not a database of the user's own.
        inside = os.path.join(self.homes[self.a.pw_name], "inside.json")
        job, _, out = self.sbatch(self.a, "batch", 'env -u LD_PRELOAD srun -n 2 sh -c \'echo '
                                  '"task $SLURM_PROCID job $GSHARE_JOB_ID"\'; '
                                  'echo "batch job $GSHARE_JOB_ID"; '
                                  'env -u LD_PRELOAD %s queue -a --json > %s' % (GSHARE, inside),
                                  None, extra=["-n", "2"])
        self.wait_slurm_done(job)
        lines = self.wait_file(out).splitlines()
        seen_inside = {j["id"]: j for j in json.loads(self.wait_file(inside))["jobs"]}
        tasks = sorted(l for l in lines if l.startswith("task "))
        self.assertEqual(len(tasks), 2, lines)
        batch_job = [l.split()[-1] for l in lines if l.startswith("batch job ")]
        task_jobs = {l.split()[-1] for l in tasks}
        self.assertEqual(len(task_jobs), 1, lines)
        self.assertNotEqual(task_jobs, set(batch_job), lines)
        listed = json.loads(self.as_user(self.a, "queue", "-a", "--json", check_rc=0).stdout)
        steps = {j["id"]: j["slurm_step"] for j in listed["jobs"] if j.get("slurm_job_id") == job}
        self.assertEqual(sorted(steps.values()), ["0", "batch"], "%s\n%s\n%s\n%s" % (
            steps, lines, json.dumps(listed), self.log()))
        self.assertEqual(steps[int(task_jobs.pop())], "0")
        batch_id = int(batch_job[0])
        self.assertEqual((seen_inside.get(batch_id, {}).get("kind"),
                          seen_inside.get(batch_id, {}).get("slurm_step")), ("slurm", "batch"),
                         "%s\n%s" % (json.dumps(seen_inside), lines))

        # Outside Slurm a task prolog joins nothing: the job comes from the process tree.
        r = self.as_user(self.a, "slurm", "task-prolog",
                         extra_env={"SLURM_JOB_ID": str(b_job), "SLURM_STEP_ID": "0",
                                    "SLURM_JOB_GPUS": "0"}, check_rc=0)
        self.assertNotIn("export", r.stdout)
        self.assertIn("print gshare: ", r.stdout)
        self.assertIn("no task of a Slurm job step", r.stdout)
        self.assertEqual(len(r.stdout.strip().splitlines()), 1, r.stdout)
        # Only root speaks as the Prolog.
        r = self.as_user(self.a, "--config", self.config, "slurm", "prolog",
                         extra_env={"SLURM_JOB_ID": "4242", "SLURM_JOB_UID": str(self.a.pw_uid)},
                         check_rc=0)
        self.assertIn("permission denied", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

        # With the daemon down a step runs ungated, and says so once.
        self.stop_system()
        job, _, out = self.sbatch(self.b, "batch", body, 3)
        self.wait_slurm_done(job)
        text = self.wait_file(out)
        self.assertIn("fake_app: done 3", text)
        warnings = [l for l in text.splitlines() if l.startswith("gshare: ")]
        self.assertEqual(len(warnings), 1, text)
        self.assertIn("runs without GPU sharing", warnings[0])


if __name__ == "__main__":
    unittest.main()
