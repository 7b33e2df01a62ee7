"""What /proc says about a process, for gshare's end-to-end tests (standard library only):
its environment, command line, state, memory, CPU time, children and the shared host pools
it maps. Every reader answers for a process that is gone (empty, None or False) instead of
raising, except proc_rss_kib and proc_cpu_seconds, which are read from live processes."""
import os


def _read(path, mode="r"):
    # /proc files of other processes may hold any bytes (a command named with Latin-1, say).
    try:
        if "b" in mode:
            with open(path, mode) as f:
                return f.read()
        with open(path, mode, errors="replace") as f:
            return f.read()
    except OSError:
        return b"" if "b" in mode else ""


def proc_environ(pid):
    raw = _read("/proc/%d/environ" % pid, "rb")
    out = {}
    for item in raw.split(b"\0"):
        if b"=" in item:
            k, v = item.split(b"=", 1)
            out[k.decode(errors="replace")] = v.decode(errors="replace")
    return out


def _exe(pid):
    try:
        return os.path.realpath(os.readlink("/proc/%d/exe" % pid))
    except OSError:
        return None


def proc_cmdline(pid):
    raw = _read("/proc/%d/cmdline" % pid, "rb")
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def proc_state(pid):
    """The one-letter state of /proc/<pid>/stat, or None when the process is gone."""
    stat = _read("/proc/%d/stat" % pid)
    if not stat:
        return None
    return stat[stat.rfind(")") + 2:].split()[0]


def proc_rss_kib(pid):
    """VmRSS of /proc/<pid>/status in KiB (0 when it says none)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def proc_cpu_seconds(pid):
    """User plus system CPU seconds of `pid` so far (/proc/<pid>/stat utime + stime)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_alive(pid):
    state = proc_state(pid)
    return state is not None and state not in ("Z", "X")


def all_pids():
    return [int(d) for d in os.listdir("/proc") if d.isdigit()]


def children_of(pid):
    out = []
    for p in all_pids():
        stat = _read("/proc/%d/stat" % p)
        if not stat:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 1 and int(fields[1]) == pid:
            out.append(p)
    return out


def host_pool_files(pid):
    """The inodes of the shared host pool files (docs/memory.md "Pinned host pool") that
    process `pid` maps; empty when it maps none or is gone."""
    try:
        with open("/proc/%d/maps" % pid) as f:
            return {line.split()[4] for line in f if "memfd:gshare-host-pool" in line}
    except OSError:
        return set()
