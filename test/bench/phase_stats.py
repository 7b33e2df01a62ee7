#!/usr/bin/env python3
"""The service's latency with the trainings running and with them stopped, in turns within one
window (priority.sh with PAUSE_PERIOD), and the trainings' rate while they ran.

    python3 test/bench/phase_stats.py CASE_DIR [--margin 0.3] [--period-ms 12] [--gen 64]
    python3 test/bench/phase_stats.py selftest    (synthetic phases; run by benchlib.py selftest)

CASE_DIR is one of priority.sh's case folders: service.out (window_start, window_end, the
service's JSON line), times.txt (`pause <epoch>` and `resume <epoch>` lines: when the trainings
were sent SIGSTOP and SIGCONT), the per-request file (latencies.txt of prio_service.py: ms in
arrival order, request i arriving at window_start + i x period; or detail.txt of
llm_service.py: arrival offset s, TTFT ms, TPOT ms) and train<k>.log (`step wall_time loss`).

The window is cut at each pause and resume into phases: `shared` (the trainings ran) and `alone`
(they were stopped: the same service process, daemon and MPS server, with nothing beside it). A
request counts in a phase when it arrived at least --margin seconds after the phase began and
ended before the phase ended (ResNet: arrival + latency; LLM: arrival + TTFT + TPOT x (gen - 1)),
so no request saw both. The trainings' rate in the shared phases: their steps that ended there,
--margin after each phase's start, over those phases' time; before: from each training's 10th
step to its last step before the window, summed over trainings (priority.sh's `outside`).

Prints one line: `phases case=DIR phases=<shared>/<alone> shared_n alone_n shared_p50 shared_p99
alone_p50 alone_p99 p99_ratio [tpot_shared_p50 tpot_shared_p99 tpot_alone_p50 tpot_alone_p99
tpot_p99_ratio] [gpu_shared_p99 gpu_alone_p99 wait_shared_p99 wait_alone_p99] train_shared
train_before kept per_phase_p99=<p99 of each phase, in order>`. The gpu_/wait_ fields come with
prio_service.py's detail.txt: the span of the requests' forward pass (CUDA events around it)
and their latency less it (waiting for the GPU or a CPU), ms. A tail in the first is the
forward pass slowed: its kernels on the GPU, or, for a launch-bound service (whose span equals
its thread's CPU time in detail.txt), the thread that launches them; one in the second is time
it waited.
Percentiles are nearest-rank. Exit 0; 1 when there are no phases or no requests."""
import argparse
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from prio_service import nearest_rank  # noqa: E402  (this folder's percentile)


def read_marks(d):
    ws = we = None
    shape = "resnet"
    with open(os.path.join(d, "service.out")) as f:
        for line in f:
            if line.startswith("window_start "):
                ws = float(line.split()[1])
            elif line.startswith("window_end "):
                we = float(line.split()[1])
            elif line.startswith("{"):
                j = json.loads(line)
                ws, we = j.get("window_start", ws), j.get("window_end", we)
                shape = j.get("shape", shape)
    toggles = []
    with open(os.path.join(d, "times.txt")) as f:
        for line in f:
            p = line.split()
            if len(p) >= 2 and p[0] in ("pause", "resume"):
                toggles.append((float(p[1]), p[0]))
    return ws, we, shape, sorted(toggles)


def phases_of(ws, we, toggles):
    """[(start, end, 'shared' | 'alone')] from the window's start (trainings running)."""
    out, start, kind = [], ws, "shared"
    for t, what in toggles:
        if t <= start or t >= we:
            continue
        out.append((start, t, kind))
        start, kind = t, ("alone" if what == "pause" else "shared")
    out.append((start, we, kind))
    return out


def requests(d, ws, shape, period_ms, gen):
    """[(arrival, end, latency ms, tpot ms or None, gpu ms or None)]"""
    out = []
    if shape == "llm":
        with open(os.path.join(d, "detail.txt")) as f:
            for line in f:
                p = line.split()
                if len(p) >= 3:
                    a, ttft, tpot = float(p[0]) + ws, float(p[1]), float(p[2])
                    out.append((a, a + (ttft + tpot * (gen - 1)) / 1000, ttft, tpot, None))
    else:
        gpu = []  # prio_service.py --detail-out: latency, wall, cpu, gpu (ms)
        if os.path.exists(os.path.join(d, "detail.txt")):
            with open(os.path.join(d, "detail.txt")) as f:
                gpu = [float(p[3]) for p in (line.split() for line in f) if len(p) >= 4]
        with open(os.path.join(d, "latencies.txt")) as f:
            for i, line in enumerate(f):
                if line.strip():
                    a, lat = ws + i * period_ms / 1000, float(line)
                    out.append((a, a + lat / 1000, lat, None, gpu[i] if i < len(gpu) else None))
    return out


def train_logs(d):
    logs = []
    for path in sorted(glob.glob(os.path.join(d, "train*.log"))):
        steps = []
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) == 3:
                    steps.append((int(p[0]), float(p[1])))
        logs.append(steps)
    return logs


def rate_before(logs, ws):
    """The trainings' steps/s before `ws`, summed: each from its 10th step (start-up and warm-up
    left out) to its last step before `ws`; None unless every log has such steps."""
    rates = []
    for log in logs:
        t10 = next((t for s, t in log if s == 10), None)
        pre = [(s, t) for s, t in log if s > 10 and t < ws]
        if t10 is not None and pre and pre[-1][1] > t10:
            rates.append((pre[-1][0] - 10) / (pre[-1][1] - t10))
    return sum(rates) if logs and len(rates) == len(logs) else None


def fmt(x):
    return "-" if x is None or x != x else f"{x:.2f}"


def selftest():
    """Checks the phases, the requests' assignment and the rates on a synthetic case folder:
    a 24 s window whose trainings stop at 4, 12 and 20 s and continue at 8 and 16 s, requests of
    10 ms beside them and 8 ms alone, one 2 s request across a pause, and a training that logs
    20 steps/s before the window and 10 steps/s while it runs in it. Returns how many checks
    passed (an AssertionError otherwise)."""
    import tempfile
    ws, we = 1000.0, 1024.0
    stops = [(1004.0, 1008.0), (1012.0, 1016.0), (1020.0, 1024.0)]
    stopped = lambda t: any(a <= t < b for a, b in stops)  # noqa: E731
    assert [p[2] for p in phases_of(ws, we, [(1004.0, "pause"), (1008.0, "resume")])] == \
        ["shared", "alone", "shared"]
    assert phases_of(ws, we, [(999.0, "pause"), (1030.0, "resume")]) == [(ws, we, "shared")]
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "service.out"), "w") as f:
            f.write(f"window_start {ws}\nwindow_end {we}\n")
        marks = [f"pause {a}\nresume {b}\n" for a, b in stops[:2]] + [f"pause {stops[2][0]}\n"]
        with open(os.path.join(d, "times.txt"), "w") as f:
            f.write("# key epoch_seconds [rc]\n" + "".join(marks))
        lat = [8.0 if stopped(ws + i * 0.012) else 10.0 for i in range(2000)]
        lat[250] = 2000.0  # arrives at 1003.0, ends at 1005.0: across the pause, left out
        with open(os.path.join(d, "latencies.txt"), "w") as f:
            f.write("".join(f"{x}\n" for x in lat))
        # The GPU time: 9.5 ms beside the trainings, 7.9 alone (the rest waited).
        with open(os.path.join(d, "detail.txt"), "w") as f:
            f.write("".join(f"{x}\t{x}\t{x}\t{x - (0.1 if x == 8.0 else 0.5)}\n" for x in lat))
        with open(os.path.join(d, "train1.log"), "w") as f:
            step, t = 0, 990.0
            while t < 1030.0:
                if not stopped(t):
                    step += 1
                    f.write(f"{step} {t:.3f} 1.0\n")
                t += 0.1 if ws <= t < we else 0.05
        reqs = requests(d, ws, "resnet", 12.0, 64)
        assert len(reqs) == 2000 and abs(reqs[250][1] - 1005.0) < 1e-9, reqs[250]
        assert abs(rate_before(train_logs(d), ws) - 20.0) < 0.05
        assert rate_before([[(1, 1.0)]], ws) is None  # no 10th step: no rate
        import contextlib
        import io
        out = io.StringIO()
        argv, sys.argv = sys.argv, ["phase_stats.py", d]
        try:
            with contextlib.redirect_stdout(out):
                assert main() == 0
        finally:
            sys.argv = argv
        kv = dict(x.split("=", 1) for x in out.getvalue().split()[2:])
        assert kv["phases"] == "3/3", kv
        # Every shared request but the one across the pause: arrived 0.3 s into a running phase
        # and done before it ended.
        runs = [(1000.0, 1004.0), (1008.0, 1012.0), (1016.0, 1020.0)]
        expect = sum(1 for i in range(2000) if i != 250 and any(
            a + 0.3 <= ws + i * 0.012 and ws + i * 0.012 + 0.010 <= b for a, b in runs))
        assert kv["shared_n"] == str(expect), (kv, expect)
        assert kv["shared_p99"] == "10.00" and kv["alone_p99"] == "8.00", kv  # 2 s one left out
        assert kv["p99_ratio"] == "1.250", kv
        assert (kv["gpu_shared_p99"], kv["gpu_alone_p99"]) == ("9.50", "7.90"), kv
        assert (kv["wait_shared_p99"], kv["wait_alone_p99"]) == ("0.50", "0.10"), kv
        assert abs(float(kv["kept"]) - 0.5) < 0.02, kv
    return 10


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--margin", type=float, default=0.3, help="s left out after each toggle")
    ap.add_argument("--period-ms", type=float, default=12.0, help="prio_service.py's period")
    ap.add_argument("--gen", type=int, default=64, help="llm_service.py's tokens per request")
    args = ap.parse_args()
    ws, we, shape, toggles = read_marks(args.dir)
    if ws is None or we is None or not toggles:
        print(f"phases case={args.dir} no window or no pause in it", flush=True)
        return 1
    phases = phases_of(ws, we, toggles)
    reqs = requests(args.dir, ws, shape, args.period_ms, args.gen)
    lat = {"shared": [], "alone": []}
    tpot = {"shared": [], "alone": []}
    gpu = {"shared": [], "alone": []}
    wait = {"shared": [], "alone": []}
    per_phase = []
    for s, e, kind in phases:
        mine = [r for r in reqs if r[0] >= s + args.margin and r[1] <= e]
        lat[kind] += [r[2] for r in mine]
        tpot[kind] += [r[3] for r in mine if r[3] is not None]
        gpu[kind] += [r[4] for r in mine if r[4] is not None]
        wait[kind] += [r[2] - r[4] for r in mine if r[4] is not None]
        per_phase.append(f"{kind[0]}{fmt(nearest_rank(sorted(r[2] for r in mine), 99))}")
    if not lat["shared"] or not lat["alone"]:
        print(f"phases case={args.dir} no requests in a phase kind", flush=True)
        return 1
    stats = {k: (nearest_rank(sorted(v), 50), nearest_rank(sorted(v), 99)) for k, v in lat.items()}
    out = [f"phases case={args.dir}",
           f"phases={sum(p[2] == 'shared' for p in phases)}/{sum(p[2] == 'alone' for p in phases)}",
           f"shared_n={len(lat['shared'])} alone_n={len(lat['alone'])}",
           f"shared_p50={fmt(stats['shared'][0])} shared_p99={fmt(stats['shared'][1])}",
           f"alone_p50={fmt(stats['alone'][0])} alone_p99={fmt(stats['alone'][1])}",
           f"p99_ratio={stats['shared'][1] / stats['alone'][1]:.3f}"]
    if tpot["shared"] and tpot["alone"]:
        t = {k: (nearest_rank(sorted(v), 50), nearest_rank(sorted(v), 99)) for k, v in tpot.items()}
        out += [f"tpot_shared_p50={fmt(t['shared'][0])} tpot_shared_p99={fmt(t['shared'][1])}",
                f"tpot_alone_p50={fmt(t['alone'][0])} tpot_alone_p99={fmt(t['alone'][1])}",
                f"tpot_p99_ratio={t['shared'][1] / t['alone'][1]:.3f}"]
    if gpu["shared"] and gpu["alone"]:
        p99 = lambda v: fmt(nearest_rank(sorted(v), 99))  # noqa: E731
        out += [f"gpu_shared_p99={p99(gpu['shared'])} gpu_alone_p99={p99(gpu['alone'])}",
                f"wait_shared_p99={p99(wait['shared'])} wait_alone_p99={p99(wait['alone'])}"]
    logs = train_logs(args.dir)
    shared_time = sum(e - s - args.margin for s, e, k in phases if k == "shared" and e - s > args.margin)
    done = sum(1 for log in logs for _, t in log
               for s, e, k in phases if k == "shared" and s + args.margin <= t <= e)
    rate = done / shared_time if shared_time > 0 else None
    total_before = rate_before(logs, ws)
    kept = f"{rate / total_before:.3f}" if rate is not None and total_before else "-"
    out += [f"train_shared={fmt(rate)} train_before={fmt(total_before)} kept={kept}",
            "per_phase_p99=" + ",".join(per_phase)]
    print(" ".join(out), flush=True)
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["selftest"]:
        print(f"phase_stats selftest: {selftest()} passed, 0 failed")
        sys.exit(0)
    sys.exit(main())
