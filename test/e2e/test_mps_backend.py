"""The MPS backend (docs/design.md "MPS backend") with the stand-in control program of
test/fake_mps (no GPU here): the daemon starts a control daemon per GPU in folders of its own,
jobs that may share a server are launched as its clients (their environment names its pipes,
their MPS priority and thread cap), those that may not run outside, and the daemon quits the
control daemon as it stops. With the fake driver a client of lower priority runs beside a busy
higher job instead of in its gaps only (the shim's concurrent lane)."""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from gshare_e2e import (FAKE_APP, FAKE_APP_LINKED, FAKECUDA_DIR, FAKENVML_DIR, HERE, TestCase,
                        fake_app_of, proc_alive)
from system_case import SystemDaemonCase

FAKE_MPS = os.path.abspath(os.path.join(HERE, "..", "fake_mps", "nvidia-cuda-mps-control"))
MIB = 1 << 20
ENV_CMD = ["sh", "-c", "env | grep -E '^(CUDA_MPS_|GSHARE_MPS_CLIENT|CUDA_VISIBLE_DEVICES)' | sort"]


def _read(path):
    with open(path, errors="replace") as f:
        return f.read()


def _cmdline(pid):
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            return f.read()
    except OSError:
        return b""


def env_of(text):
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


class MpsBackendTest(TestCase):
    def mps_harness(self, **mps):
        settings = {"control": FAKE_MPS}
        settings.update(mps)
        h = self.harness(config={"sharing": "auto", "quantum": "20s", "stagger": False},
                         mps=settings, memory={"context_reserve": "1MiB"})
        h.env["FAKE_CUDA_DEVICE_FILE"] = os.path.join(h.tmp, "device")
        h.env["FAKE_CUDA_MEM_BYTES"] = str(256 * MIB)
        return h

    def run_env(self, h, *opts, env=None):
        r = h.gshare("run", "-q", *opts, "--", *ENV_CMD, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        return env_of(r.stdout)

    def test_batch_cap_beside_service_caps_a_batch_job_that_starts_beside_a_service(self):
        h = self.mps_harness(batch_thread_percentage=30, batch_cap="beside_service")
        h.start_daemon()
        self.assertNotIn("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", self.run_env(h))  # no service
        running = h.start_run(["sleep", "30"], ["-p", "10", "-q"], name="service")
        h.wait_for(lambda: len(h.status()["daemon"]["mps"]["gpus"][0]["clients"]) >= 1, 30,
                   "the service is a client")
        capped = self.run_env(h)
        self.assertEqual(capped.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), "30", capped)
        self.assertEqual(capped.get("CUDA_MPS_CLIENT_PRIORITY"), "1", capped)
        running.kill()
        with open(h.daemon_log) as f:
            self.assertRegex(f.read(), r"job \d+: MPS client on GPU 0 \(below normal priority, "
                             r"30 % of the threads\)")

    def test_auto_caps_a_batch_job_beside_a_service_only_without_green_contexts(self):
        for cuda, capped in (("12020", True), ("12040", False)):
            h = self.mps_harness(batch_thread_percentage=30)
            h.env["LD_LIBRARY_PATH"] = FAKECUDA_DIR + ":" + FAKENVML_DIR
            h.env["FAKE_NVML_CUDA_VERSION"] = cuda
            h.start_daemon()
            running = h.start_run(["sleep", "30"], ["-p", "10", "-q"], name="service")
            h.wait_for(lambda: len(h.status()["daemon"]["mps"]["gpus"][0]["clients"]) >= 1, 30,
                       "the service is a client")
            beside = self.run_env(h)
            running.kill()
            self.assertEqual(beside.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"),
                             "30" if capped else None, (cuda, beside))
            with open(h.daemon_log) as f:
                log = f.read()
            want = ("MPS: batch_cap beside_service (auto, CUDA 12.2 driver)" if capped else
                    "MPS: batch_cap never (auto, CUDA 12.4 driver): no batch job is capped")
            self.assertIn(want, log)
            self.assertEqual(h.gshare("daemon", "stop").returncode, 0)

    def test_jobs_are_clients_of_the_daemons_server(self):
        h = self.mps_harness(batch_thread_percentage=30)
        h.start_daemon()
        mps = h.status()["daemon"]["mps"]["gpus"]
        self.assertEqual(len(mps), 1, mps)
        self.assertTrue(mps[0]["up"], mps)
        control = mps[0]["pid"]
        self.assertTrue(proc_alive(control))
        pipe = os.path.join(h.state_dir, "mps", "0", "pipe")

        batch = self.run_env(h)
        self.assertEqual(batch.get("CUDA_MPS_PIPE_DIRECTORY"), pipe, batch)
        self.assertEqual(batch.get("CUDA_MPS_LOG_DIRECTORY"),
                         os.path.join(h.state_dir, "mps", "0", "log"), batch)
        self.assertEqual(batch.get("GSHARE_MPS_CLIENT"), "1", batch)
        self.assertEqual(batch.get("CUDA_MPS_CLIENT_PRIORITY"), "1", batch)
        self.assertNotIn("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", batch)  # no service there

        service = self.run_env(h, "-p", "10")
        self.assertEqual(service.get("CUDA_MPS_CLIENT_PRIORITY"), "0", service)
        self.assertNotIn("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", service)

        # While a service runs, a batch job that starts is not capped either (batch_cap's
        # default, "never": the shim's SM partition keeps SMs free for the busy service).
        running = h.start_run(["sleep", "30"], ["-p", "10", "-q"], name="service")
        h.wait_for(lambda: len(h.status()["daemon"]["mps"]["gpus"][0]["clients"]) >= 1, 30,
                   "the service is a client")
        beside = self.run_env(h)
        self.assertNotIn("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", beside)
        self.assertEqual(beside.get("CUDA_MPS_CLIENT_PRIORITY"), "1", beside)
        running.kill()
        h.wait_for(lambda: not h.status()["daemon"]["mps"]["gpus"][0]["clients"], 30,
                   "the service's end")

        # A service that asks for isolation is no client: a batch job beside it is not capped
        # (it fills the service's gaps instead), and the server lists no client.
        isolated = h.start_run(["sleep", "30"], ["-J", "isolated", "-p", "10", "-q"],
                               name="isolated", env=dict(h.env, GSHARE_MPS="0"))
        h.wait_for(lambda: any(j.get("name") == "isolated" and j.get("state") == "RUNNING"
                               for j in h.queue_jobs().values()), 30, "the isolated service")
        self.assertEqual(h.status()["daemon"]["mps"]["gpus"][0]["clients"], [])
        # Status names it, and why, while it runs.
        iso_id = [int(i) for i, j in h.queue_jobs().items() if j.get("name") == "isolated"]
        outside = h.status()["daemon"]["mps"]["outside"]
        self.assertEqual([o["job"] for o in outside], iso_id, outside)
        self.assertIn("it asks for isolation", outside[0]["why"])
        text = h.gshare("daemon", "status").stdout
        self.assertIn("MPS: job %d runs outside (it asks for isolation" % iso_id[0], text)
        beside = self.run_env(h)
        self.assertEqual(beside.get("CUDA_MPS_CLIENT_PRIORITY"), "1", beside)
        self.assertNotIn("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", beside)
        isolated.kill()

        # Isolation asked for, or an engine that does not run under MPS: outside.
        self.assertEqual(self.run_env(h, "--env", "GSHARE_MPS=0"), {})
        self.assertEqual(self.run_env(h, env=dict(h.env, GSHARE_MPS="off")), {})
        self.assertEqual(self.run_env(h, "--memory", "checkpoint"), {})

        # A submitted job gets the same through its supervisor.
        out = os.path.join(h.tmp, "submitted.out")
        job = h.submit("-o", out, "-p", "10", "--", *ENV_CMD)
        h.wait_state(job, ["COMPLETED"])
        with open(out) as f:
            submitted = env_of(f.read())
        self.assertEqual(submitted.get("CUDA_MPS_PIPE_DIRECTORY"), pipe, submitted)
        self.assertEqual(submitted.get("CUDA_MPS_CLIENT_PRIORITY"), "0", submitted)
        isolated = h.submit("-o", out, "--env", "GSHARE_MPS=0", "--", *ENV_CMD)
        h.wait_state(isolated, ["COMPLETED"])
        with open(out) as f:
            self.assertEqual(env_of(f.read()), {})

        with open(h.daemon_log) as f:
            log = f.read()
        self.assertRegex(log, r"job \d+: outside MPS \(its memory engine \(checkpoint\)")
        # The daemon knows who asked for isolation (the service, two runs, one submitted job):
        # it counts them as no client of its server.
        self.assertEqual(len(re.findall(r"job \d+: outside MPS \(it asks for isolation", log)), 4,
                         log)
        self.assertNotIn("% of the threads", log)  # batch_cap's default caps no job
        self.assertRegex(log, r"job \d+: MPS client on GPU 0 \(normal priority\)")
        self.assertEqual(h.gshare("daemon", "stop").returncode, 0)
        h.wait_for(lambda: not proc_alive(control), 30, "the control daemon quit")
        with open(os.path.join(h.state_dir, "mps", "0", "log", "control.log")) as f:
            self.assertIn("quit pid=%d" % control, f.read())

    def test_a_server_left_up_for_running_jobs_quits_after_them(self):
        """`gshare daemon stop` while a job is a client leaves its control daemon up (a quit
        would fail the job's CUDA calls); once the job has ended, the mps-linger process that the
        stop started quits it, unless a daemon runs on the same folders again by then."""
        h = self.mps_harness()
        h.start_daemon()
        control = h.status()["daemon"]["mps"]["gpus"][0]["pid"]
        log = os.path.join(h.state_dir, "mps", "0", "log", "control.log")
        job = h.start_run(["sleep", "3"], ["-q", "-J", "client"], name="client")
        h.wait_for(lambda: h.status()["daemon"]["mps"]["gpus"][0]["clients"], 30, "a client")
        self.assertEqual(h.gshare("daemon", "stop").returncode, 0)
        h.wait_for(lambda: "it quits once they have ended" in _read(h.daemon_log), 30,
                   "the stop's line on the server left up")
        self.assertTrue(proc_alive(control), "quit under a running client")
        self.assertEqual(job.wait(), 0, job.stderr)
        h.wait_for(lambda: not proc_alive(control), 30, "the control daemon quit after the job")
        with open(log) as f:
            self.assertIn("quit pid=%d" % control, f.read())

        # A daemon started before the job ends keeps the server: the linger leaves it alone.
        h.start_daemon()
        control = h.status()["daemon"]["mps"]["gpus"][0]["pid"]
        job = h.start_run(["sleep", "2"], ["-q", "-J", "client2"], name="client2")
        h.wait_for(lambda: h.status()["daemon"]["mps"]["gpus"][0]["clients"], 30, "a client")
        self.assertEqual(h.gshare("daemon", "stop").returncode, 0)
        h.wait_for(lambda: not h.daemon_processes(), 30, "the daemon's exit")
        h.start_daemon()
        self.assertEqual(h.status()["daemon"]["mps"]["gpus"][0]["pid"], control, "kept")
        self.assertEqual(job.wait(), 0, job.stderr)
        lingers = lambda: [p for p in os.listdir("/proc") if p.isdigit() and b"mps-linger" in
                           _cmdline(p)]
        h.wait_for(lambda: not lingers(), 30, "the linger to end")
        self.assertTrue(proc_alive(control), "the linger quit a server another daemon kept")
        self.assertEqual(h.gshare("daemon", "stop").returncode, 0)
        h.wait_for(lambda: not proc_alive(control), 30, "the control daemon quit at the stop")

    def test_isolation_asked_inside_the_job_is_named_too_late(self):
        # GSHARE_MPS=0 counts where `gshare run` runs: the daemon chooses MPS at launch. Set by
        # the job itself, it finds the process an MPS client already, and the shim says so
        # once; set for `gshare run`, the job runs outside and hears nothing.
        h = self.mps_harness()
        h.start_daemon()
        late = h.gshare("run", "-q", "--", "env", "GSHARE_MPS=off", FAKE_APP, "--kernels", "3")
        self.assertEqual(late.returncode, 0, late.stderr)
        self.assertEqual(late.stderr.count("GSHARE_MPS=off is set inside the job, but gshare "
                                           "launched it as an MPS client"), 1, late.stderr)
        heard = h.gshare("run", "-q", "--", FAKE_APP, "--kernels", "3",
                         env=dict(h.env, GSHARE_MPS="off"))
        self.assertEqual(heard.returncode, 0, heard.stderr)
        self.assertNotIn("GSHARE_MPS", heard.stderr)
        log = _read(h.daemon_log)
        self.assertEqual(len(re.findall(r"job \d+: MPS client on GPU 0", log)), 1, log)
        self.assertEqual(len(re.findall(r"job \d+: outside MPS \(it asks for isolation", log)), 1,
                         log)

    def test_a_lower_client_arriving_without_room_runs_outside(self):
        # MPS is chosen at launch; the driver reads it at the process's first cuInit, where the
        # shim asks again: a lower job arriving while a higher client left less than
        # join_free_percentage of the GPU free runs outside MPS (its waiting context would slow
        # the higher client's kernels), is listed outside and why; an equal one joins.
        # The fake GPU gives 240 MiB; each arrival without room first waits one second for it.
        h = self.mps_harness(join_free_percentage=30, join_wait_seconds=1)
        h.start_daemon()
        pipe = os.path.join(h.state_dir, "mps", "0", "pipe")
        stop = os.path.join(h.tmp, "stop-service")
        # A job decides at its first process's arrival; its later processes follow. This one's
        # first process arrives with room (a client), its second once the service left none.
        early = self.two_arrivals(h, "early")
        self.wait_file(h, early["first"])
        service = self.start_holding_service(h, stop)
        # Each route to the driver's cuInit (the exports, dlsym, cuGetProcAddress) asks first.
        for app, route in ((FAKE_APP, "dlsym"), (FAKE_APP, "gpa"), (FAKE_APP_LINKED, "linked")):
            low = h.gshare("run", "-q", "-J", "low", "--", app, "--route", route, "--print-mps",
                           "--kernels", "1")
            self.assertEqual(low.returncode, 0, low.stderr)
            self.assertIn("fake_app: mps -\n", low.stdout, route)
        log = _read(h.daemon_log)
        self.assertRegex(log, r"job \d+: MPS client on GPU 0 \(below normal")  # at launch
        self.assertRegex(log, r"job \d+: outside MPS \(a client of priority 10 left \d+ MiB of "
                              r"its GPU free at its first CUDA call \(below 30 %.*no room "
                              r"within \[mps\] join_wait_seconds \(1 s\)")
        # This one's first process arrives without room (outside), its second after the
        # service's end.
        late = self.two_arrivals(h, "late")
        self.wait_file(h, late["first"])
        open(early["go"], "w").close()
        self.assertEqual(early["job"].wait(60), 0)
        self.assertEqual(_read(early["out"]).count("fake_app: mps %s\n" % pipe), 2,
                         _read(early["out"]))
        equal = h.gshare("run", "-q", "-p", "10", "-J", "equal", "--", FAKE_APP, "--print-mps",
                         "--kernels", "1")
        self.assertEqual(equal.returncode, 0, equal.stderr)
        self.assertIn("fake_app: mps %s\n" % pipe, equal.stdout)
        # While it runs, status lists the outside job and why.
        waiting = h.start_fake(["--print-mps", "--kernels", "0", "--sleep-ms", "20000"],
                               ["-q"], name="waiting")
        h.wait_for(lambda: h.status()["daemon"]["mps"]["outside"], 30, "the job outside")
        outside = h.status()["daemon"]["mps"]["outside"]
        self.assertIn("first CUDA call", outside[0]["why"], outside)
        self.assertIn("runs outside (a client of priority 10 left",
                      h.gshare("daemon", "status").stdout)
        waiting.kill()
        with open(stop, "w"):
            pass
        self.assertEqual(service.wait(60), 0)
        open(late["go"], "w").close()
        self.assertEqual(late["job"].wait(60), 0)
        self.assertEqual(_read(late["out"]).count("fake_app: mps -\n"), 2, _read(late["out"]))

    def test_a_lower_client_arriving_without_room_waits_to_join_until_room_comes(self):
        # Before it runs outside, the arriving job waits at its first CUDA call, with no
        # context, for [mps] join_wait_seconds: room that comes meanwhile (here the higher
        # client ends) lets it join the server, where it runs beside a later service.
        h = self.mps_harness(join_free_percentage=30, join_wait_seconds=120)
        h.start_daemon()
        pipe = os.path.join(h.state_dir, "mps", "0", "pipe")
        stop = os.path.join(h.tmp, "stop-service")
        service = self.start_holding_service(h, stop)
        low = h.start_fake(["--print-mps", "--kernels", "1"], [], name="low")
        arriving = h.wait_for(lambda: h.status()["daemon"]["mps"]["arriving"], 30,
                              "the job waiting to join")
        self.assertIn("first CUDA call", arriving[0]["why"], arriving)
        self.assertIn("waits at its first CUDA call to join (a client of priority 10 left",
                      h.gshare("daemon", "status").stdout)
        # `queue` names what the running job waits for, in the table and in --json.
        rows = {j["name"]: j for j in h.queue_jobs().values()}
        self.assertEqual((rows["low"]["state"], rows["low"]["reason"]), ("RUNNING", "MpsRoom"))
        self.assertEqual(rows["service"]["reason"], "")
        self.assertRegex(h.gshare("queue").stdout, r"(?m)^.*\blow\b.*\bMpsRoom\b")
        time.sleep(1.5)  # longer than a question's pause: it still waits, and is not outside
        self.assertIsNone(low.poll())
        self.assertEqual(h.status()["daemon"]["mps"]["outside"], [])
        # A signal the process catches (Ctrl-C in a Python job) ends its wait: it goes on
        # outside MPS at once and handles the signal.
        impatient = h.start_fake(["--print-mps", "--catch-sigint", "--kernels", "1"], ["-q"],
                                 name="impatient")
        h.wait_for(lambda: len(h.status()["daemon"]["mps"]["arriving"]) == 2, 30,
                   "the second job waiting to join")
        os.kill(impatient.child_pid(), signal.SIGINT)
        self.assertEqual(impatient.wait(30), 0)
        self.assertIn("fake_app: sigint 1\nfake_app: mps -\n", impatient.stdout)
        self.assertRegex(_read(h.daemon_log), r"outside MPS \(a client of priority 10 left .*; a "
                                              r"signal ended its wait for room\)")
        self.assertIsNone(low.poll())  # the other one waits on
        with open(stop, "w"):
            pass
        self.assertEqual(service.wait(60), 0)
        self.assertEqual(low.wait(60), 0)
        self.assertIn("fake_app: mps %s\n" % pipe, low.stdout)
        # The job said once why it seemed to hang.
        self.assertEqual(low.stderr.count("gshare: waiting for room on the GPU before this "
                                          "process's first CUDA call"), 1, low.stderr)
        self.assertEqual(h.status()["daemon"]["mps"]["arriving"], [])
        self.assertRegex(_read(h.daemon_log), r"job \d+: waits at its first CUDA call to join MPS")

    def start_holding_service(self, h, stop):
        """A priority-10 job that holds 200 MiB of the fake GPU's 240 until `stop` exists;
        returned once the daemon counts its memory."""
        service = h.start_fake(["--kernels", "0", "--swap-check", 200 * MIB, "--pieces", "1",
                                "--cycles", "2", "--gap-ms", "200", "--stop-file", stop],
                               ["-p", "10", "-q"], name="service")

        def holds():
            rec = h.job_record(lambda j: j.get("name") == "service" and "memory" in j) or {}
            return rec.get("memory", {}).get("resident", 0) >= 200 * MIB
        h.wait_for(holds, 30, "the service's memory")
        return service

    def two_arrivals(self, h, name):
        """A batch job of two processes arriving one after the other: the first prints what
        its cuInit saw and creates <name>.first; the second waits for <name>.go, then does
        the same. Their output goes to <name>.out."""
        base = os.path.join(h.tmp, name)
        app = "%s --print-mps --kernels 1" % FAKE_APP
        script = ("%s >> %s.out && touch %s.first && while [ ! -e %s.go ]; do sleep 0.05; done"
                  " && %s >> %s.out") % (app, base, base, base, app, base)
        job = h.start_run(["sh", "-c", script], ["-q", "-J", name], name=name)
        return {"job": job, "first": base + ".first", "go": base + ".go", "out": base + ".out"}

    def wait_file(self, h, path):
        h.wait_for(lambda: os.path.exists(path), 30, path)

    def test_off_starts_nothing(self):
        h = self.mps_harness(mode="off")
        h.start_daemon()
        self.assertEqual(h.status()["daemon"]["mps"]["gpus"], [])
        self.assertEqual(self.run_env(h), {})
        self.assertFalse(os.path.exists(os.path.join(h.state_dir, "mps")))

    def test_bad_mps_config_is_one_line(self):
        h = self.mps_harness(batch_thread_percentage=0)
        r = h.gshare("daemon")
        h.assert_error_line(r, 1, "mps.batch_thread_percentage")
        h = self.mps_harness(batch_cap="sometimes")
        r = h.gshare("daemon")
        h.assert_error_line(r, 1, "mps.batch_cap")
        self.assertIn('expected "auto", "never", "beside_service" or "always"', r.stderr)

    def run_pair(self, sm_pct=None, high_env=None, high_args=(), high_n=12, low_n=400,
                 lows=1, low_env=None):
        """The lanes test's pair (test_priority_lanes.py): a service of `high_n` 20 ms requests
        60 ms apart, and a batch job of `low_n` 2 ms kernels all queued at once, the batch job
        an MPS client; `lows` such batch jobs (named "low", or "low1", "low2", ...).
        `high_env`, `low_env`: the service's and the batch jobs' environments' additions;
        `high_args`: the service's fake_app's. Returns the harness, the service's kernels and
        the batch job's (with several, a list of each one's), by start time."""
        h = self.mps_harness()
        if sm_pct is not None:
            h.env["GSHARE_PRIORITY_SM_PCT"] = str(sm_pct)
        h.start_daemon()
        # Bursts of ten, each followed by a second stream's kernel that waits for the burst.
        env = dict(h.env, **low_env) if low_env else None
        low = [h.start_fake(["--kernels", low_n, "--kernel-ms", 2, "--sync-every", 10,
                             "--consumer"], ["-p", "0"], env=env,
                            name="low" if lows == 1 else "low%d" % (i + 1))
               for i in range(lows)]
        lp = [job.child_pid() for job in low]
        for p in lp:
            h.wait_kernels(p, 5)
        env = dict(h.env, **high_env) if high_env else None
        # CLOCK_MONOTONIC, the fake's op log's clock: no kernel before this had a higher job
        # to yield to.
        self.high_started_ns = time.monotonic_ns()
        high = h.start_fake(["--kernels", high_n, "--kernel-ms", 20, "--sync-every", 1,
                             "--gap-ms", 60, *high_args], ["-p", "10"], name="high", env=env)
        hp = high.child_pid()
        h.assert_done(high, high_n)
        for job in low:
            h.assert_done(job, low_n)
        lo = [h.ops("K", p) for p in lp]
        return h, h.ops("K", hp), lo[0] if lows == 1 else lo

    def run_beside(self, sm_pct=None):
        """run_pair: as an MPS client beside an MPS client the batch job runs beside the busy
        service instead of in its gaps only."""
        h, hi, lo = self.run_pair(sm_pct)
        high_n = len(hi)
        inside = [sum(1 for o in lo if k.start < o.start < k.end) for k in hi]
        # Beside a 20 ms kernel about ten 2 ms kernels start; the lanes allow at most 3.
        self.assertGreaterEqual(sum(1 for n in inside if n >= 5), high_n // 2,
                                "the MPS client still waited for the service's gaps: %s" % inside)
        low_id = h.job_record(lambda j: j["name"] == "low")["id"]
        self.assertLess(h.job_record(lambda j: j["id"] == low_id).get("held_back_seconds", 0),
                        0.5)
        # Its streams kept their order throughout: no two of its kernels ran at once, wherever
        # each ran (a burst's kernels one after another, the consumer's after the burst).
        for a, b in zip(lo, lo[1:]):
            self.assertLessEqual(a.end, b.start, "the stream's order broke: %s %s" % (a, b))
        return hi, lo

    def test_a_depth_bound_keeps_few_launches_queued_on_the_partition(self):
        # The batch job queues bursts of ten 2 ms kernels. Beside the busy service they move to
        # the SM partition; with GSHARE_PRIORITY_NARROW_DEPTH=2 the third of a burst waits for
        # the first to end, and so on (the census counts the waits); without it none waits.
        def narrow_counts(depth):
            census_dir = tempfile.mkdtemp(prefix="gshare-census-")
            self.addCleanup(shutil.rmtree, census_dir, True)
            env = {"GSHARE_CENSUS": os.path.join(census_dir, "census")}
            if depth:
                env["GSHARE_PRIORITY_NARROW_DEPTH"] = str(depth)
            h, hi, lo = self.run_pair(low_env=env)
            for a, b in zip(lo, lo[1:]):
                self.assertLessEqual(a.end, b.start, "the stream's order broke: %s %s" % (a, b))
            text = "".join(_read(os.path.join(census_dir, f)) for f in os.listdir(census_dir))
            got = {k: int(v) for k, v in re.findall(r"^#(narrowed|narrow_waits) (\d+)$", text,
                                                     re.M)}
            return got, sum(1 for o in lo if "@" in o.name)

        bounded, moved = narrow_counts(2)
        self.assertGreaterEqual(moved, 20, "too few kernels ran on the partition")
        self.assertEqual(bounded["narrowed"], moved, bounded)
        # Of each burst's launches that moved, all but the first two found two queued.
        self.assertGreaterEqual(bounded["narrow_waits"], moved // 2, bounded)
        unbounded, moved = narrow_counts(0)
        self.assertGreaterEqual(moved, 20, "too few kernels ran on the partition")
        self.assertEqual(unbounded["narrow_waits"], 0, unbounded)

    def test_a_lower_client_runs_beside_a_busy_higher_job(self):
        hi, lo = self.run_beside()
        # Beside the busy service its launches went to the SM partition (a green context of
        # 70 % of the fake's 132 SMs, rounded up to 96) ...
        beside = [o for o in lo if any(k.start < o.start < k.end for k in hi)]
        narrow = [o for o in beside if o.name.endswith("@sm96")]
        self.assertGreaterEqual(len(narrow), len(beside) * 8 // 10,
                                "%d of %d kernels beside the service ran on every SM" % (
                                    len(beside) - len(narrow), len(beside)))
        # ... and before it came, on every SM. (Not "before its first kernel ran": once its
        # first launch is made it is busy, and a loaded machine may start that kernel late.)
        before = [o for o in lo if o.end < self.high_started_ns]
        self.assertGreaterEqual(len(before), 5, "run_pair waits for five")
        self.assertEqual([o.name for o in before if "@" in o.name], [])

    def test_no_sm_partition_when_its_share_is_zero(self):
        _, lo = self.run_beside(sm_pct=0)
        self.assertEqual([o.name for o in lo if "@" in o.name], [])

    def run_two_beside(self, turns):
        """Two batch MPS clients (run_pair's) beside the service, GSHARE_PRIORITY_BESIDE=turns
        in their environments (None: unset, the default of one turn). Returns, for each service
        kernel after its first two, how many kernels of each client started inside it, and the
        clients' census count of refused turns (#beside_denied, summed)."""
        census_dir = tempfile.mkdtemp(prefix="gshare-census-")
        self.addCleanup(shutil.rmtree, census_dir, True)
        env = {"GSHARE_CENSUS": os.path.join(census_dir, "census")}
        if turns is not None:
            env["GSHARE_PRIORITY_BESIDE"] = str(turns)
        _, hi, per_client = self.run_pair(low_n=500, lows=2, low_env=env)
        denied = sum(int(m) for f in os.listdir(census_dir)
                     for m in re.findall(r"^#beside_denied (\d+)$",
                                         _read(os.path.join(census_dir, f)), re.M))
        return [tuple(sum(1 for o in lo if k.start < o.start < k.end) for lo in per_client)
                for k in hi[2:]], denied

    def test_beside_turns_bound_how_many_clients_run_beside_a_busy_service(self):
        # Unbounded (0), both clients run beside the busy service; with one turn, the default,
        # one at a time, the other waiting for its gaps (at most the lanes' few kernels of a
        # gap's end).
        both, denied_unbounded = self.run_two_beside(0)
        self.assertGreaterEqual(sum(1 for a, b in both if a >= 4 and b >= 4), len(both) // 2,
                                "unbounded, the clients did not both run beside: %s" % both)
        one, denied = self.run_two_beside(None)
        self.assertLessEqual(sum(1 for a, b in one if a >= 4 and b >= 4), 1,
                             "with one turn both clients ran beside the service: %s" % one)
        self.assertGreaterEqual(sum(1 for a, b in one if max(a, b) >= 4), len(one) // 2,
                                "with one turn no client ran beside the service: %s" % one)
        # The census counts a refusal once per wait, not at every look of its loop (which
        # spins hundreds of times a wait): fewer than the clients' 1,000 launches.
        self.assertEqual(denied_unbounded, 0)
        self.assertTrue(1 <= denied < 1000, "#beside_denied %d" % denied)
        # The turn is taken anew after each gap, so it passes from one client to the other.
        for i in (0, 1):
            self.assertGreaterEqual(sum(1 for t in one if t[i] >= 4), 2,
                                    "client %d never held the turn: %s" % (i + 1, one))

    def test_a_client_waits_for_the_gaps_of_a_higher_job_outside_mps(self):
        # The service asks for isolation: it runs outside MPS, time-sliced with the server's
        # clients, so the batch client beside it fills its gaps only, as outside MPS.
        h, hi, lo = self.run_pair(high_env={"GSHARE_MPS": "0"})
        self.assertEqual(len(hi), 12)
        self.assertRegex(_read(h.daemon_log), r"job \d+: outside MPS \(it asks for isolation")
        # Beside a 20 ms kernel about ten 2 ms kernels would start; the gap rule allows ~1.
        # The first request meets the burst the batch job queued before it yielded.
        inside = [sum(1 for o in lo if k.start < o.start < k.end) for k in hi[1:]]
        self.assertLessEqual(max(inside), 3, "the client ran beside the isolated service: %s"
                             % inside)
        # Every gap while the batch job still had work (1,500 kernels outlast the service's
        # ~30 per gap; a loaded machine stretches the gaps) holds some of its kernels.
        in_gaps = [sum(1 for o in lo if a.end < o.start < b.start) for a, b in zip(hi, hi[1:])
                   if b.start < lo[-1].start]
        self.assertGreaterEqual(len(in_gaps), len(hi) - 3, "the batch job ended early")
        self.assertGreaterEqual(sum(1 for n in in_gaps if n > 0), len(in_gaps) - 1, in_gaps)
        self.assertEqual([o.name for o in lo if "@" in o.name], [], "kernels went narrow")

    def test_a_client_waits_for_the_gaps_of_a_service_that_fell_behind(self):
        # Eight requests 60 ms apart, then ninety-two back to back: the service's arrivals
        # outran it. The client runs beside it, then, once the service is behind (no real gap
        # for three of its usual 80 ms periods), waits for its gaps; a backlog longer than the
        # rule's cap (0.5 s) is the service's new pace, and the client runs beside it again.
        census_dir = tempfile.mkdtemp(prefix="gshare-census-")
        self.addCleanup(shutil.rmtree, census_dir, True)
        census = os.path.join(census_dir, "census")
        # A hundred kernels, so that one gap that a loaded machine gives the service anywhere
        # but just after the cap still leaves enough kernels to judge (behind_kernels).
        h, hi, lo = self.run_pair(high_args=["--backlog-after", 8], high_n=100, low_n=1800,
                                  high_env={"GSHARE_CENSUS": census})
        self.assertEqual(len(hi), 100)
        counts = [_read(os.path.join(census_dir, f)) for f in os.listdir(census_dir)]
        self.assertTrue(any(re.search(r"^#behind [1-9]", c, re.M) for c in counts), counts)
        inside = [sum(1 for o in lo if k.start < o.start < k.end) for k in hi]
        self.assertGreaterEqual(sum(1 for n in inside[1:8] if n >= 5), 4,
                                "the client did not run beside the service: %s" % inside)
        self.assertTrue(lo[-1].end > hi[-1].end, "the batch job ended before the backlog")
        due, released = behind_kernels(hi, paced=8)
        self.assertGreaterEqual(len(due), 8, "the service never went three periods without a "
                                "real gap (kernels due to be behind: %s)" % due)
        # One due kernel may hold a burst of the client's: on a loaded machine (CI's 2 cores
        # running other tests) the client once ran 9 kernels inside one service kernel of a
        # backlog, 0 in the kernels before and after. A client that ignores the mark runs
        # beside every one of them.
        beside = [(k, inside[k], round((hi[k].start - hi[k - 1].end) / 1e6, 2))
                  for k in due if inside[k] > 3]
        self.assertLessEqual(len(beside), 1,
                             "the client ran beside a service that fell behind (kernel, client "
                             "kernels inside, ms since the one before): %s of %s" % (beside, [
                                 (k, inside[k]) for k in due]))
        self.assertGreaterEqual(len(released), 6, "no kernel after the backlog's cap: %s" % inside)
        self.assertGreaterEqual(sum(1 for k in released if inside[k] >= 5), len(released) // 2,
                                "the client still waited after the backlog's cap: %s" % [
                                    (k, inside[k]) for k in released])
        # The service's census counts that backlog among those that lasted the cap.
        self.assertTrue(any(re.search(r"^#behind_capped [1-9]", c, re.M) for c in counts),
                        "no backlog past the cap in the census: %s" % counts)
        # ...and lists it: marked after three usual periods without a real gap, cleared at the
        # cap, with what the watch had learnt.
        events = [m.groupdict() for c in counts for m in re.finditer(
            r"^#behind_event (?P<kind>[mcx]) at_us=\d+ usual_gap_us=(?P<gap>\d+) "
            r"period_us=(?P<period>\d+) span_us=(?P<span>\d+) forecast_us=\d+ "
            r"last_gaps_us=[\d,]+$", c, re.M)]
        marks = [e for e in events if e["kind"] == "m"]
        self.assertTrue(marks and all(int(e["span"]) > 3 * int(e["period"]) > 0 for e in marks),
                        events)
        self.assertTrue(any(e["kind"] == "x" and int(e["span"]) >= 500000 for e in events),
                        events)
        self.assertEqual(h.job_record(lambda j: j["name"] == "low")["state"], "COMPLETED")


def behind_kernels(hi, paced, long_mul=3, max_behind_s=0.5):
    """Which of the service's kernels (`hi`, by start; the first `paced` ones paced by their
    arrivals) BacklogWatch (shim/lease/backlog_watch.h) must find behind, and which come after
    its cap, whatever load did to the timeline: (due, released), lists of indexes. Due: those
    that start more than long_mul + 1 usual periods after the last kernel that followed a gap
    which may have been real, and end before the cap (max_behind_s) could have run out;
    released: those of the same backlog that start 50 ms (five of the waiting client's futex
    timeouts) after the latest the cap can run out. A gap may be real from a third of the usual
    gap (the rule: from half; the shim measures from its own idle start, a little after a
    kernel's end), so a service process that a loaded machine kept off its CPU between two
    back-to-back kernels ends a backlog here as in the rule. Once the cap has run out the rule
    learns the service's pace anew, which this does not follow: nothing after the next gap
    that may be real is judged."""
    gaps = [b.start - a.end for a, b in zip(hi, hi[1:])]
    usual_gap = sum(gaps[:paced - 1]) / (paced - 1)
    period = (hi[paced - 1].start - hi[0].start) / (paced - 1)
    last_real, due, released = hi[0].start, [], []
    for k in range(1, len(hi)):
        behind_by = last_real + (long_mul + 1) * period
        if gaps[k - 1] >= usual_gap / 3:
            if released:
                break
            last_real = hi[k].start
        elif hi[k].start > behind_by and hi[k].end < behind_by - period + max_behind_s * 1e9:
            due.append(k)
        elif hi[k].start > behind_by + (max_behind_s + 0.05) * 1e9:
            released.append(k)
    return due, released


ENV_LINE = "env | grep -E '^CUDA_MPS_(PIPE_DIRECTORY|CLIENT_PRIORITY)=' | sort"


@unittest.skipUnless(os.geteuid() == 0, "needs root: it creates users and a system daemon")
@unittest.skipUnless(shutil.which("useradd") and shutil.which("runuser"), "needs useradd, runuser")
class SystemMpsTest(SystemDaemonCase):
    """The system daemon's MPS server on a GPU serves one user at a time: while one user's jobs
    are its clients, another user's jobs run outside it (the control daemon would queue their
    clients until the first user's end); once they have ended the other user's jobs become its
    clients. As two Unix users, in cron's bare environment."""

    def setUp(self):
        self.setup_system(("gsharempsa", "gsharempsb"),
                          '[queue]\nmax_running = 4\ngpus = 1\n[mps]\ncontrol = "%s"\n' % FAKE_MPS)
        self.a, self.b = self.users
        self.start_system()

    def state_of(self, user, job):
        r = self.as_user(user, "queue", "-a", "--json", check_rc=0)
        return {j["id"]: j["state"] for j in json.loads(r.stdout)["jobs"]}.get(job)

    def env_job(self, user, name):
        out = os.path.join(self.homes[user.pw_name], name + ".out")
        job = self.submit(user, "-J", name, "-o", out, "--wrap", ENV_LINE)
        self.as_user(user, "wait", str(job), check_rc=0)
        with open(out) as f:
            return env_of(f.read())

    def test_one_user_per_server(self):
        a, b = self.a, self.b
        r = self.as_user(a, "status", "--json", check_rc=0)
        mps = json.loads(r.stdout)["daemon"]["mps"]["gpus"]
        self.assertTrue(mps and mps[0]["up"], r.stdout + self.log())
        pipe = os.path.join(self.sys, "run", "mps", "0", "pipe")
        self.assertEqual(os.stat(pipe).st_mode & 0o777, 0o755)  # every user's client reaches it

        sleeper = self.submit(a, "-J", "a-sleeps", "--", "sleep", "60")
        self.h.wait_for(lambda: self.state_of(a, sleeper) == "RUNNING", 30, "a-sleeps running")
        self.assertEqual(self.env_job(a, "a-env").get("CUDA_MPS_PIPE_DIRECTORY"), pipe,
                         self.log())
        self.assertEqual(self.env_job(b, "b-env"), {}, "another user's job was made a client "
                         "of a server that serves the first user's jobs\n" + self.log())
        self.assertIn("serves another user's jobs", self.log())

        self.as_user(a, "cancel", str(sleeper), check_rc=0)
        self.as_user(a, "wait", str(sleeper))
        b_after = self.env_job(b, "b-after")
        self.assertEqual(b_after.get("CUDA_MPS_PIPE_DIRECTORY"), pipe, self.log())
        self.assertEqual(b_after.get("CUDA_MPS_CLIENT_PRIORITY"), "1")


@unittest.skipUnless(os.geteuid() == 0, "needs root: it creates users and a system daemon")
@unittest.skipUnless(shutil.which("useradd") and shutil.which("runuser"), "needs useradd, runuser")
class SystemLanesMpsTest(SystemDaemonCase):
    """Another user's service beside a user's batch job that is an MPS client, under the system
    daemon: the server serves the first user, so the service runs outside MPS, time-sliced with
    it, and the batch client must fill the service's gaps only, not run beside it (the board's
    mps_seats). Two Unix users made with useradd, `gshare run` in cron's bare environment."""

    def setUp(self):
        self.setup_system(("gsharelna", "gsharelnb"),
                          '[scheduler]\nsharing = "auto"\nquantum = "20s"\nstagger = false\n'
                          '[memory]\ncontext_reserve = "1MiB"\n[mps]\ncontrol = "%s"\n' % FAKE_MPS)
        self.a, self.b = self.users
        self.device = self.shared_device_file()

    def start_fake(self, user, name, priority, *fake_args):
        fake = {"FAKE_CUDA_DEVICE_FILE": self.device, "FAKE_CUDA_MEM_BYTES": str(256 * MIB)}
        return self.start_as_user(user, "run", "-J", name, "-p", priority, "--", FAKE_APP,
                                  *fake_args, extra_env=fake)

    def finished(self, p, what):
        try:
            out, err = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            self.fail("%s did not finish\n%s" % (what, self.log()))
        self.assertEqual(p.returncode, 0, "%s: %s\n%s" % (what, err, self.log()))

    def test_another_users_service_keeps_its_gaps(self):
        self.start_system()
        low = self.start_fake(self.a, "a-batch", -1, "--kernels", 1500, "--kernel-ms", 2,
                              "--sync-every", 10)
        lp = self.h.wait_for(lambda: fake_app_of(self.a.pw_uid), 30, "the batch job's process")
        self.h.wait_for(lambda: len(self.h.ops("K", lp)) >= 5, 30, "the batch job's kernels")
        high = self.start_fake(self.b, "b-service", 0, "--kernels", 12, "--kernel-ms", 20,
                               "--sync-every", 1, "--gap-ms", 60)
        hp = self.h.wait_for(lambda: fake_app_of(self.b.pw_uid), 30, "the service's process")
        self.finished(high, "the service")
        self.finished(low, "the batch job")
        log = self.log()
        self.assertRegex(log, r"job \d+: MPS client on GPU 0 \(below normal priority\)")
        self.assertIn("serves another user's jobs", log)
        hi, lo = self.h.ops("K", hp), self.h.ops("K", lp)
        self.assertEqual((len(hi), len(lo)), (12, 1500))
        # As outside MPS: beside a 20 ms kernel about ten 2 ms kernels would start; the gap rule
        # allows about one. The first request meets what the batch job queued before; on a
        # loaded machine (CI's two cores, three tests at a time) one more may meet a few more.
        inside = [sum(1 for o in lo if k.start < o.start < k.end) for k in hi[1:]]
        self.assertLessEqual(sorted(inside)[-2], 3, "the batch client ran beside another "
                             "user's service: %s\n%s" % (inside, log))
        self.assertLess(max(inside), 8, "the batch client ran beside another user's service: "
                        "%s\n%s" % (inside, log))
        # Every gap while the batch job still had work (1,500 kernels outlast the service's
        # ~30 per gap; a loaded machine stretches the gaps) holds some of its kernels.
        in_gaps = [sum(1 for o in lo if a.end < o.start < b.start) for a, b in zip(hi, hi[1:])
                   if b.start < lo[-1].start]
        self.assertGreaterEqual(len(in_gaps), len(hi) - 3, "the batch job ended early")
        self.assertGreaterEqual(sum(1 for n in in_gaps if n > 0), len(in_gaps) - 1, in_gaps)


if __name__ == "__main__":
    unittest.main()
