"""A real single-node Slurm cluster for gshare's tests and benchmarks: munged, slurmctld and
slurmd of Debian's packages on localhost, everything (state, spool, logs, munge's key and
socket) under one directory and on free ports, so it disturbs no Slurm of the machine.
Slurm's TaskProlog, Prolog and Epilog are scripts that run `gshare [ARGS] slurm HOOK`, as
docs/slurm.md deploys them. Needs root.

Where the packages are not installed (the GPU machine), `prefix` names a directory holding
their files: sbin/ (slurmd, slurmctld, slurmstepd, munged), bin/ (sbatch, squeue, ...),
lib/ (libmunge and the libraries the machine lacks) and lib/slurm-wlm/ (Slurm's plugins and
libslurmfull)."""
import os
import shutil
import socket
import stat
import subprocess
import time

FAKE_GPU_DEVICE = "/dev/gshare-test-gpu0"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SlurmCluster:
    """One node with `gpus` (device files; a fake one by default) cut into `shards`, two
    partitions (batch, the default, and interactive), `cpus` CPUs. The hooks run
    `gshare_bin`; set_target() gives them their arguments, so one cluster serves several
    tests. `users` are the users whose jobs stop() cancels."""

    def __init__(self, root, gshare_bin, users, prefix=None, gpus=(FAKE_GPU_DEVICE,), shards=4,
                 cpus=2, memory_mb=1000, cgroup_conf=None):
        self.root, self.gshare_bin, self.users = root, gshare_bin, users
        self.prefix, self.gpus, self.shards, self.cpus, self.memory_mb = (
            prefix, gpus, shards, cpus, memory_mb)
        self.cgroup_conf = cgroup_conf  # cgroup.conf's text, when Slurm's default will not do
        self.node = socket.gethostname().split(".")[0]
        self.conf = os.path.join(root, "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        if prefix:
            self.env["PATH"] = "%s/sbin:%s/bin:%s" % (prefix, prefix, self.env.get("PATH", ""))
            self.env["LD_LIBRARY_PATH"] = "%s/lib/slurm-wlm:%s/lib" % (prefix, prefix)
        else:
            self.env["PATH"] = self.env.get("PATH", "") + ":/usr/sbin:/sbin"

    @staticmethod
    def write(path, text, mode=0o644):
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, mode)

    def client_env(self):
        """What a user's sbatch/squeue needs beyond a bare environment."""
        env = {"SLURM_CONF": self.conf}
        if self.prefix:
            env["PATH"] = "%s/bin:/usr/bin:/bin" % self.prefix
            env["LD_LIBRARY_PATH"] = self.env["LD_LIBRARY_PATH"]
        return env

    def start(self):
        r = self.root
        os.chmod(r, 0o755)
        for d in ("state", "spool", "log", "munge", "hooks"):
            os.makedirs(os.path.join(r, d), 0o755, exist_ok=True)
        os.chmod(os.path.join(r, "log"), 0o777)
        for dev in self.gpus:
            if not os.path.exists(dev):
                os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # as /dev/null
        key = os.path.join(r, "munge", "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o600)
        self.munge_socket = os.path.join(r, "munge", "sock")
        subprocess.run(["munged", "--force", "--socket=" + self.munge_socket, "--key-file=" + key,
                        "--log-file=" + os.path.join(r, "munge", "log"),
                        "--pid-file=" + os.path.join(r, "munge", "pid"),
                        "--seed-file=" + os.path.join(r, "munge", "seed")],
                       env=self.env, check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        # One script per hook: Slurm runs a hook by path, with no arguments.
        hooks = os.path.join(r, "hooks")
        for hook in ("task-prolog", "prolog", "epilog"):
            self.write(os.path.join(hooks, hook),
                       '#!/bin/sh\n. %s/target\nexec "$GSHARE_BIN" $GSHARE_ARGS slurm %s\n' %
                       (hooks, hook), 0o755)
        self.set_target("")
        lines = [
            "ClusterName=gshare",
            "SlurmctldHost=%s(127.0.0.1)" % self.node,
            "SlurmUser=root", "SlurmdUser=root",
            "AuthType=auth/munge", "AuthInfo=socket=%s" % self.munge_socket,
            "CredType=cred/munge",
            "StateSaveLocation=%s/state" % r, "SlurmdSpoolDir=%s/spool" % r,
            "SlurmctldPidFile=%s/slurmctld.pid" % r, "SlurmdPidFile=%s/slurmd.pid" % r,
            "SlurmctldLogFile=%s/log/slurmctld.log" % r, "SlurmdLogFile=%s/log/slurmd.log" % r,
            "SlurmctldPort=%d" % free_port(), "SlurmdPort=%d" % free_port(),
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "SchedulerType=sched/builtin", "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core", "GresTypes=gpu,shard", "ReturnToService=2",
            "MpiDefault=none", "KillWait=2",
            "TaskProlog=%s/task-prolog" % hooks,
            "Prolog=%s/prolog" % hooks, "Epilog=%s/epilog" % hooks,
            "NodeName=%s NodeAddr=127.0.0.1 CPUs=%d RealMemory=%d Gres=gpu:%d,shard:%d "
            "State=UNKNOWN" % (self.node, self.cpus, self.memory_mb, len(self.gpus),
                               self.shards * len(self.gpus)),
            "PartitionName=batch Nodes=%s Default=YES MaxTime=INFINITE State=UP" % self.node,
            "PartitionName=interactive Nodes=%s MaxTime=INFINITE State=UP" % self.node]
        if self.prefix:
            lines.append("PluginDir=%s/lib/slurm-wlm" % self.prefix)
        self.write(self.conf, "\n".join(lines) + "\n")
        gres = ["AutoDetect=off"]
        gres += ["NodeName=%s Name=gpu File=%s" % (self.node, dev) for dev in self.gpus]
        gres.append("NodeName=%s Name=shard Count=%d" % (self.node, self.shards * len(self.gpus)))
        self.write(os.path.join(r, "gres.conf"), "\n".join(gres) + "\n")
        if self.cgroup_conf is not None:
            self.write(os.path.join(r, "cgroup.conf"), self.cgroup_conf)
        subprocess.run(["slurmctld"], env=self.env, check=True, timeout=60,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        slurmd = ["slurmd"]
        if self.prefix:
            slurmd += ["-d", os.path.join(self.prefix, "sbin", "slurmstepd")]
        subprocess.run(slurmd, env=self.env, check=True, timeout=60,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            out = subprocess.run(["sinfo", "-h", "-N", "-o", "%t"], env=self.env, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout
            if out.strip() and set(out.split()) <= {"idle", "mix", "alloc"}:
                return
            time.sleep(0.2)
        raise AssertionError("the Slurm node never came up: %s\n%s" % (out, self.logs()))

    def set_target(self, gshare_args, extra=""):
        """What the hooks run from now on: `gshare GSHARE_ARGS slurm HOOK`, after `extra`
        (shell lines, e.g. exports)."""
        self.write(os.path.join(self.root, "hooks", "target"),
                   "GSHARE_BIN=%s\nGSHARE_ARGS='%s'\n%s" % (self.gshare_bin, gshare_args, extra))

    def logs(self):
        out = []
        for name in ("slurmctld.log", "slurmd.log"):
            try:
                with open(os.path.join(self.root, "log", name)) as f:
                    out.append("---- %s ----\n%s" % (name, f.read()[-3000:]))
            except OSError:
                pass
        return "\n".join(out)

    def stop(self):
        for user in self.users:
            subprocess.run(["scancel", "--full", "--quiet", "-u", user], env=self.env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for pid_file in ("slurmd.pid", "slurmctld.pid", "munge/pid"):
            try:
                with open(os.path.join(self.root, pid_file)) as f:
                    os.kill(int(f.read().strip()), 15)
            except (OSError, ValueError):
                pass
        time.sleep(0.5)
        shutil.rmtree(self.root, ignore_errors=True)
