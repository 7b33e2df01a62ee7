#!/usr/bin/env python3
"""The timeline of one mem_pair.sh run: where the makespan of two jobs sharing a GPU goes.

    python3 test/bench/pair_timeline.py OUT/mem_pair/<config>/tq<TQ>   [--events]

Merges, on one clock (seconds since the pair started, times.txt's `tq<TQ>_start`):
  * each job's phases from `mem_train.py --trace` (in <dir>/A.err, B.err): `trace start|ready|
    done <epoch s>`, `trace gpu|cpu <step> <begin> <end>`;
  * the daemon's log (<dir>/daemon.log, debug level for releases): `shared mode` / `exclusive
    mode`, `job N released <gpu> epoch E (idle|early|dropped)`, `handoff ...`, `job N's next
    gap stretched to M ms` (phase staggering) lines;
  * job ids to names from the status samples (<dir>/status.jsonl);
  * with GSHARE_TRACE_SWAP set in the jobs' environment, the shim's lines in A.err / B.err,
    `gshare: trace evict|swapin|pin <bytes> <begin> <end> pool <bytes>` (--events only).
Prints per job: start-up (process start to `ready`), when its first GPU phase began, GPU and
CPU seconds, how much longer each GPU phase took than the same step bare (when bare_<name>.err
of the parent folder has a trace: a step's first kernel waits at the gate for the lease, so
this is the wait plus the swap-in), and the exit; then the releases by reason, the
handoffs, the seconds both jobs spent in CPU phases at once (the GPU idle in shared mode) and
the daemon's gap stretches and the jobs' phase offset (B's GPU phases against A's: 0 is lock
step); the same for the pair run together without gshare (SMALL=1). --events lists every event in time order.

The daemon log's times are the machine's local time; they are put on the jobs' clock by the
whole number of quarter hours that best aligns the first log line with the pair's start.
"""
import datetime
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memlib import (HANDOFF_RE, STRETCH_RE, idle_together, phase_offset, read_samples,  # noqa: E402
                    read_times)

LOG_TIME_RE = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+)\]")
RELEASE_RE = re.compile(r"job (\d+) released \S+ epoch (\d+) \((\w+)\)")
MODE_RE = re.compile(r": (shared|exclusive) mode$")


def read_trace(path):
    """{"start": t, "ready": t, "done": t, "gpu": [(step, b, e)], "cpu": [...]} or None."""
    if not os.path.exists(path):
        return None
    tr = {"gpu": [], "cpu": [], "moves": []}
    with open(path, errors="replace") as f:
        for line in f:
            p = line.split()
            if len(p) == 8 and p[:2] == ["gshare:", "trace"]:    # the shim's swap trace
                tr["moves"].append((p[2], int(p[3]), float(p[4]), float(p[5]), int(p[7])))
                continue
            if len(p) < 3 or p[0] != "trace":
                continue
            if p[1] in ("gpu", "cpu") and len(p) == 5:
                tr[p[1]].append((int(p[2]), float(p[3]), float(p[4])))
            elif len(p) == 3:
                tr[p[1]] = float(p[2])
    return tr if tr["gpu"] else None


def daemon_events(path, t0):
    """[(epoch s, text)] from the daemon log, shifted onto the jobs' clock."""
    raw = []
    if not os.path.exists(path):
        return raw
    for line in open(path, errors="replace"):
        m = LOG_TIME_RE.match(line)
        if not m:
            continue
        t = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f")
        raw.append((t.replace(tzinfo=datetime.timezone.utc).timestamp(), line.rstrip("\n")))
    if not raw:
        return raw
    shift = round((raw[0][0] - t0) / 900) * 900
    return [(t - shift, text) for t, text in raw]


def job_names(status_path):
    names = {}
    for s in read_samples(status_path):
        for j in s.get("jobs", []):
            if "id" in j and j.get("name"):
                names[str(j["id"])] = j["name"]
    return names


def job_summary(name, tr, bare, end):
    gpu = [e - b for _, b, e in tr["gpu"]]
    cpu = [e - b for _, b, e in tr["cpu"]]
    extra = ""
    if bare:
        # A GPU phase under gshare includes the wait for the lease and the swap-in (the job's
        # first kernel of the step blocks at the gate): the difference to the same step bare.
        over = [g - (e - b) for g, (_, b, e) in zip(gpu, bare["gpu"])]
        extra = f" gpu_vs_bare=+{sum(over):.1f}s"
        if len(over) <= 12:
            extra += f" [{' '.join(f'{x:+.1f}' for x in over)}]"
    first = tr["gpu"][0][1] - tr["start"]
    exit_s = f" exit={end - tr['done']:.1f}s" if end else ""
    return (f"{name}: startup={tr['ready'] - tr['start']:.1f}s first_gpu_at={first:.1f}s "
            f"steps={len(gpu)} gpu={sum(gpu):.1f}s (median {statistics.median(gpu):.2f}){extra} "
            f"cpu={sum(cpu):.1f}s{exit_s}")


def phase_text(traces):
    """`phase: B's GPU phases begin X s after A's, period P s` (memlib.phase_offset)."""
    a, b = ([(x, y) for _, x, y in tr["gpu"]] for tr in traces)
    po = phase_offset(a, b)
    return f"phase: B's GPU phases begin {po[1]:+.3f} s after A's, period {po[0]:.3f} s" if po else "phase: -"


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 2
    d = argv[1].rstrip("/")
    tq = os.path.basename(d)
    parent = os.path.dirname(d)
    times = {k: v for k, (v, _) in read_times(os.path.join(parent, "times.txt")).items() if v}
    t0 = times.get(f"{tq}_start")
    traces = {n: read_trace(os.path.join(d, f"{n}.err")) for n in ("A", "B")}
    if t0 is None or not all(traces.values()):
        print(f"pair_timeline: {d}: needs times.txt's {tq}_start and traces in A.err and B.err "
              "(mem_train.py --trace)", file=sys.stderr)
        return 1
    names = job_names(os.path.join(d, "status.jsonl"))
    events = []
    for n, tr in traces.items():
        events += [(tr["start"], f"{n} start"), (tr["ready"], f"{n} ready")]
        events += [(b, f"{n} gpu {i} ({e - b:.2f} s)") for i, b, e in tr["gpu"]]
        events += [(b, f"{n} cpu {i} ({e - b:.2f} s)") for i, b, e in tr["cpu"]]
        events.append((tr["done"], f"{n} done"))
        events += [(b, f"    {n} {what} {size / 1e9:.1f} GB in {e - b:.3f} s, pool {pool / 1e9:.1f} GB")
                   for what, size, b, e, pool in tr["moves"] if size > 0]
    reasons, handoffs, stretches = {}, [], 0
    for t, text in daemon_events(os.path.join(d, "daemon.log"), t0):
        if m := RELEASE_RE.search(text):
            who = names.get(m.group(1), "job " + m.group(1))
            reasons[m.group(3)] = reasons.get(m.group(3), 0) + 1
            events.append((t, f"  daemon: {who} released ({m.group(3)})"))
        elif m := HANDOFF_RE.search(text):
            src, dst = (names.get(x, x) for x in (m.group("src"), m.group("dst")))
            handoffs.append(float(m.group("total_ms")))
            events.append((t, f"  daemon: handoff {src} -> {dst} done: evicted "
                              f"{int(m.group('evict_bytes')) / 1e9:.1f} GB, swapped in "
                              f"{int(m.group('swapin_bytes')) / 1e9:.1f} GB, total "
                              f"{m.group('total_ms')} ms"))
        elif m := STRETCH_RE.search(text):
            stretches += 1
            events.append((t, f"  daemon: {names.get(m.group(1), 'job ' + m.group(1))}'s next gap "
                              f"stretched to {m.group(2)} ms"))
        elif m := MODE_RE.search(text):
            events.append((t, f"  daemon: {m.group(1)} mode"))
    end = max(times.get(f"{tq}_{n}_end", 0) for n in traces)
    print(f"{d}: makespan {end - t0:.1f} s")
    for n, tr in traces.items():
        bare = read_trace(os.path.join(parent, f"bare_{n}.err"))
        print("  " + job_summary(n, tr, bare, times.get(f"{tq}_{n}_end")))
    print(f"  releases: {' '.join(f'{k}={v}' for k, v in sorted(reasons.items())) or 'none'}; "
          f"handoffs: {len(handoffs)}, {sum(handoffs) / 1000:.1f} s in all")
    cpu = [[(b, e) for _, b, e in tr["cpu"]] for tr in traces.values()]
    print(f"  both in CPU phases: {idle_together(*cpu):.2f} s; gap stretches: {stretches}; "
          + phase_text(traces.values()))
    together = [read_trace(os.path.join(parent, f"together_{n}.err")) for n in ("A", "B")]
    if all(together):
        cpu = [[(b, e) for _, b, e in tr["cpu"]] for tr in together]
        print(f"  together without gshare (SMALL=1): both in CPU phases {idle_together(*cpu):.2f} s; "
              + phase_text(together))
    if "--events" in argv:
        for t, text in sorted(events):
            print(f"  {t - t0:7.2f}  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
