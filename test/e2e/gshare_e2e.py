"""Shared helpers of gshare's end-to-end tests (standard library only).

Every test gets a Harness: its own temporary directory, its own daemon socket and state
directory, the fake libcuda on LD_LIBRARY_PATH and a fake-driver log. The harness stops its
daemon and kills every process it started (and anything that inherited its environment)
when the test ends, pass or fail.

The build tree comes from $GSHARE_BUILD (set by ctest), else ../../build beside this file.
Under a sanitized build (GSHARE_SANITIZE, scripts/test.sh) every gshare process writes its
AddressSanitizer/UBSan reports to <tmp>/sanitizer.<pid>, and a test whose processes report an
error fails.
"""
import collections
import glob
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from e2e_procs import (_exe, _read, all_pids, children_of, host_pool_files,  # noqa: F401
                       proc_alive, proc_cmdline, proc_cpu_seconds, proc_environ, proc_rss_kib,
                       proc_state)

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.abspath(os.environ.get("GSHARE_BUILD") or os.path.join(HERE, "..", "..", "build"))
GSHARE = os.path.join(BUILD, "src", "gshare")
SHIM = os.path.join(BUILD, "src", "libgshare.so")
FAKECUDA_DIR = os.path.join(BUILD, "fakecuda")
# The fake NVML (libnvidia-ml.so.1, every FAKE_CUDA_DEVICES GPU): a test opts in by adding it to
# the daemon's LD_LIBRARY_PATH, and the daemon then knows the GPUs' UUIDs.
FAKENVML_DIR = os.path.join(BUILD, "fakenvml")
FAKE_APP = os.path.join(BUILD, "test", "fake_app")
FAKE_APP_LINKED = os.path.join(BUILD, "test", "fake_app_linked")

# Environment variable that marks every process a harness starts (the daemon inherits it too),
# so that cleanup can find leftovers without touching anyone else's processes.
MARKER = "GSHARE_E2E_TMP"

DEFAULT_CONFIG = {
    "enabled": True,
    "quantum": "20s",
    "idle_release": "500ms",  # the shipped defaults, written out: no /etc or user config leaks in
    "drop_grace": "10s",
    "default_priority": 0,
    # The lease tests check one-at-a-time execution; test_memory_*.py set "auto" (the default).
    "sharing": "exclusive",
}

# One executed op of the fake driver: kind K kernel, G graph launch, C copy, S set, H host
# function, O other, P checkpoint transition; start/end in CLOCK_MONOTONIC nanoseconds; dev the
# physical GPU index of the op's context (-1 for P lines, which concern the whole process).
Op = collections.namedtuple("Op", "kind pid start end name dev")


def require_build(testcase):
    for path in (GSHARE, SHIM, FAKE_APP, FAKE_APP_LINKED, os.path.join(FAKECUDA_DIR, "libcuda.so.1")):
        if not os.path.exists(path):
            testcase.fail("missing %s: build the project first (GSHARE_BUILD=%s)" % (path, BUILD))


def _toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    return json.dumps(str(v))


def fake_app_of(uid):
    """The pid of the fake_app process `uid` runs, or None."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                argv0 = f.read().split(b"\0", 1)[0].decode(errors="replace")
            if os.stat("/proc/" + entry).st_uid == uid and argv0 == FAKE_APP:
                return int(entry)
        except OSError:
            continue
    return None


def overlaps(a, b):
    """Pairs (x, y), x from a and y from b, whose [start, end] intervals intersect."""
    return [(x, y) for x in a for y in b if x.start < y.end and y.start < x.end]


def owner_switches(ops):
    """How often the pid changes along ops ordered by start time."""
    pids = [o.pid for o in sorted(ops, key=lambda o: o.start)]
    return sum(1 for i in range(1, len(pids)) if pids[i] != pids[i - 1])


def fmt_ops(ops, limit=80):
    if not ops:
        return "(no ops)"
    t0 = min(o.start for o in ops)
    lines = ["%s %d %9.1f %9.1f %s" % (o.kind, o.pid, (o.start - t0) / 1e6, (o.end - t0) / 1e6, o.name)
             for o in sorted(ops, key=lambda o: o.start)[:limit]]
    return "\n".join(lines)


class Job:
    """A `gshare run` (or any command) started in the background."""

    def __init__(self, harness, argv, env, name):
        self.harness = harness
        self.argv = argv
        self.name = name
        self.out_path = os.path.join(harness.tmp, "%s.out" % name)
        self.err_path = os.path.join(harness.tmp, "%s.err" % name)
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(argv, env=env, stdout=out, stderr=err,
                                         stdin=subprocess.DEVNULL, cwd=harness.tmp)
        self._child = None

    @property
    def pid(self):
        return self.proc.pid

    def wait(self, timeout=120):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError("%s did not finish within %ss: %s\n%s" % (
                self.name, timeout, self.argv, self.harness.diagnostics()))

    def poll(self):
        return self.proc.poll()

    @property
    def stdout(self):
        return _read(self.out_path)

    @property
    def stderr(self):
        return _read(self.err_path)

    def child_pid(self, timeout=30):
        """The pid of the command `gshare run` started (the job's process, as logged).
        Found in /proc while `gshare run` lives (start_fake asks at once), else from the
        daemon's record of the job named after this Job."""
        deadline = time.monotonic() + timeout
        gshare_exe = os.path.realpath(GSHARE)
        while self._child is None:
            # Only a child that has exec'd: before that, a child may be the daemon launcher's
            # short-lived intermediate process, or the job not yet exec'd; both run gshare.
            kids = [k for k in children_of(self.pid) if _exe(k) not in (None, gshare_exe)]
            if kids:
                self._child = kids[0]
            elif self.proc.poll() is not None:
                rec = self.harness.job_record(lambda j: j.get("name") == self.name)
                if rec is None or not rec.get("pid"):
                    raise AssertionError("no pid known for job %s" % self.name)
                self._child = int(rec["pid"])
            elif time.monotonic() > deadline:
                raise AssertionError("%s (pid %d) started no child" % (self.name, self.pid))
            else:
                time.sleep(0.005)
        return self._child

    def kill(self):
        """Ends the job and everything it started; used by cleanup."""
        if self.proc.poll() is None:
            kids = children_of(self.proc.pid)
            try:
                self.proc.send_signal(signal.SIGTERM)  # gshare run forwards it to the job
                self.proc.wait(timeout=5)
            except (subprocess.TimeoutExpired, ProcessLookupError):
                pass
            for k in kids:
                for target in (lambda: os.killpg(k, signal.SIGKILL), lambda: os.kill(k, signal.SIGKILL)):
                    try:
                        target()
                    except OSError:
                        pass
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(timeout=10)


def _poll_pauses():
    """The pauses (s) of a polling wait: from 20 ms growing by a quarter each to 200 ms. Most
    conditions hold within a few polls, and a long wait polling `gshare status` every 20 ms kept a
    core busy (a sanitized CLI costs ~0.1 s of CPU a call), which slowed every other test on CI's
    two cores."""
    pause = 0.02
    while True:
        yield pause
        pause = min(pause * 1.25, 0.2)


class Harness:
    """One isolated gshare installation: temp dir, socket, state, fake driver log."""

    def __init__(self, testcase, config=None, census=False, queue=None, memory=None,
                 retention=None, notify=None, metrics=None, mps=None):
        require_build(testcase)
        self.testcase = testcase
        base = None if len(tempfile.gettempdir()) < 40 else "/tmp"
        self.tmp = tempfile.mkdtemp(prefix="gshare-e2e-", dir=base)
        self.run_dir = os.path.join(self.tmp, "run")
        self.state_dir = os.path.join(self.tmp, "state")
        os.makedirs(self.run_dir, mode=0o700)
        self.socket = os.path.join(self.run_dir, "gshare", "gshare.sock")
        self.log = os.path.join(self.tmp, "k.log")
        self.daemon_log = os.path.join(self.state_dir, "daemon.log")
        self.census = os.path.join(self.tmp, "census") if census else None
        self.jobs = []
        self._counter = 0
        settings = dict(DEFAULT_CONFIG)
        settings.update(config or {})
        self.config_path = os.path.join(self.tmp, "gshare.toml")
        with open(self.config_path, "w") as f:
            f.write("[scheduler]\n")
            for k, v in settings.items():
                f.write("%s = %s\n" % (k, _toml_value(v)))
            # [queue] (max_running, gpus), [memory] (engine, gpu_limit, host_budget,
            # context_reserve), [retention] (ended_jobs, max_ended_jobs, daemon_log_size),
            # [notify] (command), [metrics] (listen, textfile, textfile_interval)
            # [mps]: off unless a test asks (a machine with NVIDIA's driver has the real one).
            for table, keys in (("queue", queue), ("memory", memory), ("retention", retention),
                                ("notify", notify), ("metrics", metrics),
                                ("mps", mps or {"mode": "off"})):
                if not keys:
                    continue
                f.write("[%s]\n" % table)
                for k, v in keys.items():
                    f.write("%s = %s\n" % (k, _toml_value(v)))
            # E2E_DAEMON_LOG_LEVEL=debug: the daemon logs every lease message (to read a
            # failure; the tests' checks read only what the default level logs).
            if os.environ.get("E2E_DAEMON_LOG_LEVEL"):
                f.write('[daemon]\nlog_level = "%s"\n' % os.environ["E2E_DAEMON_LOG_LEVEL"])
        self.env = self._make_env()
        testcase.addCleanup(self.cleanup)

    def _make_env(self):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("GSHARE_") and k not in ("LD_PRELOAD", "FAKE_CUDA_LOG")}
        env.update({
            MARKER: self.tmp,
            "XDG_RUNTIME_DIR": self.run_dir,
            "GSHARE_STATE_DIR": self.state_dir,
            "XDG_CONFIG_HOME": os.path.join(self.tmp, "config"),  # no user config file
            # Not the machine's system daemon, should one run here (issue 21).
            "GSHARE_SYSTEM_SOCKET": os.path.join(self.tmp, "no-system-daemon.sock"),
            "FAKE_CUDA_LOG": self.log,
            "LD_LIBRARY_PATH": FAKECUDA_DIR,
        })
        if self.census:
            env["GSHARE_CENSUS"] = self.census
        # The daemon's stderr is its log and a job's supervisor has none worth reading: each
        # sanitized process reports into a file of its own instead (unsanitized ones ignore it).
        for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
            env[var] = ":".join(filter(None, [env.get(var), "log_path=" + self.sanitizer_prefix()]))
        return env

    def sanitizer_prefix(self):
        return os.path.join(self.tmp, "sanitizer")

    def sanitizer_reports(self):
        """The sanitizer reports of this harness's processes so far, as one text ("" if none)."""
        return "".join("---- %s ----\n%s" % (os.path.basename(p), _read(p))
                       for p in sorted(glob.glob(self.sanitizer_prefix() + ".*")))

    # ---- running gshare ---------------------------------------------------------------
    def gshare_argv(self, *args, config=True):
        return [GSHARE] + (["--config", self.config_path] if config else []) + list(args)

    def gshare(self, *args, timeout=60, config=True, env=None, cwd=None):
        """Runs gshare to completion (in cwd, default the harness's temp dir); returns the
        CompletedProcess (text)."""
        try:
            return subprocess.run(self.gshare_argv(*args, config=config), env=env or self.env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  stdin=subprocess.DEVNULL, text=True, timeout=timeout,
                                  cwd=cwd or self.tmp)
        except subprocess.TimeoutExpired:
            raise AssertionError("gshare %s did not finish within %ss\n%s" % (
                " ".join(args), timeout, self.diagnostics()))

    def start(self, argv, name=None, env=None):
        self._counter += 1
        job = Job(self, argv, env or self.env, name or "job%d" % self._counter)
        self.jobs.append(job)
        return job

    def start_run(self, command, run_opts=(), name=None, env=None):
        """Starts `gshare --config C run RUN_OPTS -- COMMAND` in the background."""
        return self.start(self.gshare_argv("run", *run_opts, "--", *command), name, env)

    def start_fake(self, fake_args, run_opts=(), linked=False, name=None, env=None):
        app = FAKE_APP_LINKED if linked else FAKE_APP
        self._counter += 1
        name = name or "fake%d" % self._counter
        if "-J" not in run_opts and "--name" not in run_opts:
            run_opts = ["-J", name] + list(run_opts)
        job = self.start_run([app] + [str(a) for a in fake_args], run_opts, name, env)
        job.child_pid()
        return job

    def start_together(self, path, count, timeout=60):
        """Starts the GPU work of `count` fake_app processes run with --start-file `path`:
        creates `path` once each of them says it is ready (the first process to start
        waits for the last, however late a loaded machine starts it)."""
        self.wait_for(lambda: len(glob.glob(path + ".ready.*")) >= count, timeout,
                      "%d processes ready to start" % count)
        open(path, "w").close()

    def share_fake_device(self, mem_bytes, kernel_ms=20):
        """One fake GPU of `mem_bytes` whose memory every process of this harness shares
        (FAKE_CUDA_DEVICE_FILE), so a job that does not evict leaves the next one no room;
        kernels of `kernel_ms` by default."""
        self.env["FAKE_CUDA_DEVICE_FILE"] = os.path.join(self.tmp, "device")
        self.env["FAKE_CUDA_MEM_BYTES"] = str(mem_bytes)
        self.env["FAKE_CUDA_KERNEL_MS"] = str(kernel_ms)

    def start_daemon(self):
        r = self.gshare("daemon")
        self.testcase.assertEqual(r.returncode, 0, "gshare daemon: %s" % r.stderr)
        return self.daemon_pid()

    def status(self):
        r = self.gshare("status", "--json")
        self.testcase.assertEqual(r.returncode, 0, "gshare status --json failed: %s\n%s" % (
            r.stderr, self.diagnostics()))
        return json.loads(r.stdout)

    def daemon_pid(self):
        return int(self.status()["daemon"]["pid"])

    def job_record(self, pred):
        for j in self.status()["jobs"]:
            if pred(j):
                return j
        return None

    def daemon_processes(self):
        """Pids of `gshare daemon --foreground` processes serving this harness's socket."""
        out = []
        exe = os.path.realpath(GSHARE)
        for p in all_pids():
            argv = proc_cmdline(p)
            if len(argv) >= 3 and os.path.realpath(argv[0]) == exe and "daemon" in argv and "--foreground" in argv \
                    and proc_alive(p) and proc_environ(p).get("XDG_RUNTIME_DIR") == self.run_dir:
                out.append(p)
        return out

    # ---- the batch queue ------------------------------------------------------------
    def submit(self, *args, **kw):
        """`gshare submit ARGS`: asserts that it succeeded and printed only a job id (one line
        of digits on stdout, nothing on stderr); returns the id. kw as for gshare()."""
        r = self.gshare("submit", *args, **kw)
        self.testcase.assertEqual((r.returncode, r.stderr), (0, ""), "gshare submit %s" % (args,))
        self.testcase.assertRegex(r.stdout, r"\A[0-9]+\n\Z", "submit must print only the id")
        return int(r.stdout)

    def queue_jobs(self, **kw):
        """Every job of `gshare queue -a --json`, as {id: record}, in the order listed. kw as
        for gshare()."""
        r = self.gshare("queue", "-a", "--json", **kw)
        self.testcase.assertEqual(r.returncode, 0, "gshare queue -a --json: %s" % r.stderr)
        doc = json.loads(r.stdout)
        self.testcase.assertIn("schema_version", doc)
        return collections.OrderedDict((j["id"], j) for j in doc["jobs"])

    def wait_state(self, job_id, states, timeout=60, **kw):
        """Polls `gshare queue -a --json` until job job_id is in one of states (a string or a
        tuple of them); returns its record. kw as for gshare()."""
        states = (states,) if isinstance(states, str) else tuple(states)
        deadline = time.monotonic() + timeout
        pauses = _poll_pauses()
        while True:
            rec = self.queue_jobs(**kw).get(job_id)
            if rec is not None and rec["state"] in states:
                return rec
            if time.monotonic() > deadline:
                raise AssertionError("timed out after %ss waiting for job %d to be %s; it is %s\n%s" % (
                    timeout, job_id, "/".join(states), rec and rec["state"], self.diagnostics()))
            time.sleep(next(pauses))

    def assert_error_line(self, r, rc, contains=None):
        """r (a CompletedProcess) exited rc, printed nothing on stdout and exactly one line,
        starting "gshare: ", on stderr (containing `contains` when given)."""
        self.testcase.assertEqual(r.returncode, rc, "stdout %r stderr %r" % (r.stdout, r.stderr))
        self.testcase.assertEqual(r.stdout, "")
        self.testcase.assertRegex(r.stderr, r"\Agshare: [^\n]+\n\Z", "one error line expected")
        if contains is not None:
            self.testcase.assertIn(contains, r.stderr)

    # ---- the fake driver's log ------------------------------------------------------
    def ops(self, kinds="K", pid=None, dev=None):
        """The logged ops of these kinds (None: all), of pid and of physical GPU dev when
        given, by start time."""
        out = []
        for line in _read(self.log).splitlines():
            f = line.split()
            if len(f) != 6:
                continue
            op = Op(f[0], int(f[1]), int(f[2]), int(f[3]), f[4], int(f[5]))
            if ((kinds is None or op.kind in kinds) and (pid is None or op.pid == pid)
                    and (dev is None or op.dev == dev)):
                out.append(op)
        return sorted(out, key=lambda o: o.start)

    def wait_for(self, fn, timeout, what):
        """Calls fn until it returns a true value (returned) or `timeout` s pass (AssertionError),
        pausing between calls as _poll_pauses says."""
        deadline = time.monotonic() + timeout
        pauses = _poll_pauses()
        while True:
            v = fn()
            if v:
                return v
            if time.monotonic() > deadline:
                raise AssertionError("timed out after %ss waiting for %s\n%s" % (
                    timeout, what, self.diagnostics()))
            time.sleep(next(pauses))

    def wait_kernels(self, pid, n=1, timeout=60):
        """Waits until the log holds at least n kernels of pid; returns them."""
        return self.wait_for(lambda: (lambda k: k if len(k) >= n else None)(self.ops("K", pid)),
                             timeout, "%d kernel(s) of pid %d" % (n, pid))

    def census_counts(self, pid):
        counts = {}
        for line in _read("%s.%d" % (self.census, pid)).splitlines():
            f = line.split()
            if len(f) == 2 and not f[0].startswith("#"):
                counts[f[0]] = int(f[1])
        return counts

    # ---- assertions -------------------------------------------------------------------
    def assert_done(self, job, kernels, rc=0, timeout=120):
        got = job.wait(timeout)
        self.testcase.assertEqual(got, rc, "%s exited %s\nstdout: %s\nstderr: %s\n%s" % (
            job.name, got, job.stdout, job.stderr, self.diagnostics()))
        self.testcase.assertIn("fake_app: done %d" % kernels, job.stdout,
                               "%s stderr: %s" % (job.name, job.stderr))

    def assert_exclusive(self, a_ops, b_ops, min_switches=2):
        """No op of a intersects an op of b, and the lease went back and forth."""
        bad = overlaps(a_ops, b_ops)
        self.testcase.assertEqual(bad, [], "%d overlapping pair(s), first %s\n%s" % (
            len(bad), bad[:1], fmt_ops(a_ops + b_ops)))
        if min_switches:
            self.testcase.assertGreaterEqual(
                owner_switches(a_ops + b_ops), min_switches,
                "the lease did not alternate between the jobs\n%s" % fmt_ops(a_ops + b_ops))

    def diagnostics(self):
        return "---- daemon.log (tail) ----\n%s\n---- fake log ----\n%s\n%s" % (
            "\n".join(_read(self.daemon_log).splitlines()[-30:]), fmt_ops(self.ops(None), 60),
            self.sanitizer_reports())

    # ---- cleanup ----------------------------------------------------------------------
    def cleanup(self):
        for job in self.jobs:
            try:
                job.kill()
            except Exception:  # keep cleaning up
                pass
        pids = set(self.daemon_processes())
        if os.path.exists(self.socket):
            try:
                r = subprocess.run(self.gshare_argv("status", "--json"), env=self.env, timeout=15,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                if r.returncode == 0:
                    pids.add(int(json.loads(r.stdout)["daemon"]["pid"]))
            except Exception:
                pass
            try:
                subprocess.run(self.gshare_argv("daemon", "stop"), env=self.env, timeout=15,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            except Exception:
                pass
        deadline = time.monotonic() + 5
        while any(proc_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        for p in pids:
            if proc_alive(p):
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
        # Anything else that inherited our environment (a job's orphan, a stray daemon).
        me = os.getpid()
        for p in all_pids():
            if p != me and proc_alive(p) and proc_environ(p).get(MARKER) == self.tmp:
                try:
                    os.kill(p, signal.SIGCONT)
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
        # Read after the daemon stopped: LeakSanitizer reports at exit.
        reports = self.sanitizer_reports()
        if os.environ.get("GSHARE_E2E_KEEP"):
            print("kept", self.tmp)
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)
        if "ERROR: " in reports or "runtime error:" in reports:
            raise AssertionError("sanitizer reports of gshare processes:\n" + reports)
        if reports:  # warnings only
            print(reports)


class TestCase(unittest.TestCase):
    maxDiff = None

    def harness(self, **kw):
        return Harness(self, **kw)
