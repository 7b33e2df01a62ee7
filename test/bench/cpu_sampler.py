#!/usr/bin/env python3
"""The machine's busiest threads, every PERIOD seconds until killed: a launch-bound service is as
fast as the CPU its launching thread gets, and a thread busy on the other hyperthread of its core
slows it without taking its time (its CPU time stays its wall time).

  cpu_sampler.py [--period S] [--top N]

Prints, per sample, `t <epoch seconds>`, then `steal <cpu>:<%> ...`: the CPUs whose steal time
(/proc/stat, the 8th value of each `cpuN` line: time the hypervisor ran something else while this
virtual CPU wanted to run) was above zero over the period (`steal -` when none), then
`probe <µs> <cpu>`: the wall time of a fixed piece of work (PROBE_LOOPS iterations of a Python
loop) done by this sampler once per sample, and the CPU it ended on, so that a host that runs
every thread slower, which steal time does not show (e.g. another guest on the same physical
core), is seen as a longer probe; then up to N lines `<tid> <cpu> <busy %> <comm>`: the threads
that ran during the period, busiest first; <cpu> is the CPU each last ran on
(/proc/<pid>/task/<tid>/stat field 39), <busy %> its user + system time over the period
(fields 14 and 15, in clock ticks). Reads /proc only; any user. Exit 0 on SIGTERM or SIGINT."""
import argparse
import os
import signal
import sys
import time


def threads():
    """{tid: (ticks, cpu, comm)} of every thread readable now."""
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            out[int(tid)] = parse_stat(stat)
    return out


PROBE_LOOPS = 20000


def steal_ticks():
    """{cpu: steal ticks} from /proc/stat's per-CPU lines (proc(5): user nice system idle iowait
    irq softirq steal ...); {} where the kernel does not report steal."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            parts = line.split()
            if parts and parts[0].startswith("cpu") and parts[0] != "cpu" and len(parts) > 8:
                out[int(parts[0][3:])] = int(parts[8])
    return out


def steal_line(before, after, seconds, hz):
    """`steal <cpu>:<%> ...` of the CPUs whose steal ticks grew between two steal_ticks() reads
    `seconds` apart, or `steal -`."""
    grew = [f"{c}:{100.0 * (after[c] - before.get(c, after[c])) / hz / seconds:.0f}"
            for c in sorted(after) if after[c] > before.get(c, after[c])]
    return "steal " + (" ".join(grew) if grew else "-")


def probe():
    """(µs, cpu): the wall time of PROBE_LOOPS additions in this thread and the CPU it ended on."""
    t = time.perf_counter()
    acc = 0
    for i in range(PROBE_LOOPS):
        acc += i
    took = (time.perf_counter() - t) * 1e6
    with open("/proc/thread-self/stat") as f:
        return took, parse_stat(f.read())[1]


def parse_stat(stat):
    """(user + system ticks, last CPU, comm) of one /proc/<pid>/task/<tid>/stat line (proc(5)).
    comm is in parentheses and may hold spaces and parentheses; the fields after it are plain."""
    comm = stat[stat.index("(") + 1:stat.rindex(")")]
    rest = stat[stat.rindex(")") + 2:].split()
    return int(rest[11]) + int(rest[12]), int(rest[36]), comm


def selftest():
    """Checks the parser on a made-up line and the sampler on this process; returns the count."""
    line = "42 (a b) c) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 " \
           "27 28 29 30 31 32 33 34 35 36 37 38"
    assert parse_stat(line) == (11 + 12, 36, "a b) c"), parse_stat(line)
    pid = os.getpid()
    before = threads()
    assert pid in before, "this process's main thread (tid = pid) is not listed"
    spin = time.process_time() + 0.05
    while time.process_time() < spin:
        pass
    after = threads()
    assert after[pid][0] > before[pid][0], (before[pid], after[pid])
    assert steal_line({0: 10, 1: 5}, {0: 60, 1: 5}, 1.0, 100) == "steal 0:50", "one CPU stole"
    assert steal_line({0: 10}, {0: 10}, 1.0, 100) == "steal -", "none stole"
    assert steal_line({}, {3: 7}, 0.5, 100) == "steal -", "a CPU first seen has no period"
    assert isinstance(steal_ticks(), dict) and probe()[0] > 0
    return 4


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--period", type=float, default=0.5)
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    hz = os.sysconf("SC_CLK_TCK")
    before, t0, stolen = threads(), time.time(), steal_ticks()
    try:
        while True:
            time.sleep(args.period)
            now, t1, stolen_now = threads(), time.time(), steal_ticks()
            took, on = probe()
            busy = []
            for tid, (ticks, cpu, comm) in now.items():
                d = ticks - before.get(tid, (ticks, 0, ""))[0]
                if d > 0:
                    busy.append((d, tid, cpu, comm))
            busy.sort(reverse=True)
            lines = [f"t {t1:.3f}", steal_line(stolen, stolen_now, t1 - t0, hz),
                     f"probe {took:.0f} {on}"]
            lines += [f"{tid} {cpu} {100.0 * d / hz / (t1 - t0):.0f} {comm}"
                      for d, tid, cpu, comm in busy[:args.top]]
            print("\n".join(lines), flush=True)
            before, t0, stolen = now, t1, stolen_now
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
