"""Parsing for gshare's memory benchmarks (mem_pair.sh, mem_handoff.sh, mem_stress.sh); used through
benchlib.py's subcommands, pure Python.

Inputs:
  * `gshare status --json`: per GPU "mode", "capacity", "handoffs", "last_handoff" {"from", "to",
    "drain_ms", "evict_bytes", "swapin_bytes", "swapin_ms", "total_ms"}; per job "memory"
    {"engine", "allocated", "resident", "swapped", "swaps_out", "swaps_in", "bytes_out",
    "bytes_in", "swap_seconds"}. The scripts poll it into status.jsonl, one `status_line` a line.
  * the daemon log (<state_dir>/daemon.log), one line per hand-off:
    `handoff <gpu>: job A -> job B: drain X ms, evicted N bytes, swapped in M bytes in Y ms, total Z ms`
  * times.txt: `<key> <seconds or epoch> [rc]` lines written by the scripts; `#` starts a comment.
  * job outputs: `step <i> loss <x>` lines and a `done key=value ...` line.
"""
import json
import os
import re
import statistics

from benchlib import first_difference, loss_lines, parse_done, read

HANDOFF_RE = re.compile(
    r"handoff (?P<gpu>\S+?): job (?P<src>\S+) -> job (?P<dst>\S+): drain (?P<drain_ms>[\d.]+) ms, "
    r"evicted (?P<evict_bytes>\d+) bytes(?: \(checkpoints [\d.]+ ms\))?, swapped in (?P<swapin_bytes>\d+) bytes in "
    r"(?P<swapin_ms>[\d.]+) ms(?: \((?P<room_wait_ms>[\d.]+) ms of it waiting for room\))?"
    r"(?:, other [\d.]+ ms)?, total (?P<total_ms>[\d.]+) ms")
HANDOFF_KEYS = ("drain_ms", "evict_bytes", "swapin_bytes", "swapin_ms", "total_ms")
JOB_KEYS = ("id", "name", "state", "lease", "memory", "allocated_bytes")


STRETCH_RE = re.compile(r"job (\d+)'s next gap stretched to (\d+) ms")


def idle_together(a, b):
    """Seconds in which two jobs were both in CPU phases: the intersection of two lists of
    (begin, end) intervals, each sorted and disjoint (mem_train.py --trace `cpu` phases). In
    shared mode the GPU idles then (src/policy/stagger.h)."""
    total, i, j = 0.0, 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo < hi:
            total += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def phase_offset(a, b):
    """(median period of a, median offset) of two jobs' GPU phases, each a list of (begin, end)
    in step order: the offset is, per step of a after the first, the time from its begin to the
    nearest begin of b's (negative: b began first). 0 is lock step; half the period is as far
    apart as two jobs get. None with fewer than 4 phases each."""
    if len(a) < 4 or len(b) < 4:
        return None
    starts = sorted(x for x, _ in b)
    period = statistics.median(y[0] - x[0] for x, y in zip(a[1:], a[2:]))
    offsets = [min((s - x for s in starts), key=abs) for x, _ in a[1:]]
    return period, statistics.median(offsets)


def status_line(status, t):
    """The compact record the pollers keep of one `gshare status --json`: all of "gpus", and of
    the jobs that run (or have memory figures) only what the benchmarks read."""
    jobs = [{k: j.get(k) for k in JOB_KEYS if k in j} for j in status.get("jobs", [])
            if j.get("state") in ("RUNNING", "SUSPENDED") or "memory" in j]
    return {"t": t, "gpus": status.get("gpus", []), "jobs": jobs}


def read_samples(path):
    """status.jsonl as a list (lines that do not parse are skipped: a poll cut short)."""
    samples = []
    if not os.path.exists(path):
        return samples
    for line in read(path).splitlines():
        try:
            samples.append(json.loads(line))
        except ValueError:
            continue
    return samples


def job_memory(status, name):
    """The "memory" object of the running job called `name` (else of any job so called), or None."""
    found = None
    for j in status.get("jobs", []):
        if j.get("name") == name and isinstance(j.get("memory"), dict):
            if j.get("state") == "RUNNING":
                return j["memory"]
            found = found or j["memory"]
    return found


def max_memory_field(samples, name, key):
    """The largest value of memory[key] of job `name` over the samples (None if never seen)."""
    vals = [m.get(key) for m in (job_memory(s, name) for s in samples) if m and m.get(key) is not None]
    return max(vals) if vals else None


def handoffs_from_log(text):
    out = []
    for line in text.splitlines():
        m = HANDOFF_RE.search(line)
        if m:
            h = {"gpu": m.group("gpu"), "from": m.group("src"), "to": m.group("dst")}
            for k in HANDOFF_KEYS:
                h[k] = float(m.group(k)) if k.endswith("_ms") else int(m.group(k))
            out.append(h)
    return out


def handoffs_from_status(samples):
    """Each GPU's last_handoff, once per value of its handoffs counter (hand-offs closer together
    than the polling interval are missed: prefer the daemon log)."""
    seen, out = set(), []
    for s in samples:
        for g in s.get("gpus", []):
            last, count = g.get("last_handoff"), g.get("handoffs")
            gpu = str(g.get("uuid", g.get("ordinal")))
            if not isinstance(last, dict) or not count or (gpu, count) in seen:
                continue
            seen.add((gpu, count))
            h = {"gpu": gpu, "from": str(last.get("from")), "to": str(last.get("to"))}
            for k in HANDOFF_KEYS:
                h[k] = last.get(k) or 0
            out.append(h)
    return out


def handoff_counter(samples):
    """The highest `handoffs` counter summed over GPUs in any sample (0 without samples)."""
    return max((sum(g.get("handoffs") or 0 for g in s.get("gpus", [])) for s in samples), default=0)


def collect_handoffs(d):
    """(hand-offs, source, count) of one daemon run in folder d: from daemon.log when it has
    hand-off lines, else from status.jsonl; count is the daemon's counter when only status exists."""
    log = os.path.join(d, "daemon.log")
    hs = handoffs_from_log(read(log)) if os.path.exists(log) else []
    if hs:
        return hs, "log", len(hs)
    samples = read_samples(os.path.join(d, "status.jsonl"))
    hs = handoffs_from_status(samples)
    return hs, ("status" if hs else "none"), max(len(hs), handoff_counter(samples))


def gbps(h):
    return (h["evict_bytes"] + h["swapin_bytes"]) / 1e9 / (h["total_ms"] / 1e3) if h["total_ms"] > 0 else None


def handoff_stats(hs):
    total = [h["total_ms"] for h in hs]
    rates = [r for r in (gbps(h) for h in hs) if r is not None]
    med = lambda v: statistics.median(v) if v else None  # noqa: E731
    return {"n": len(hs), "med_total_ms": med(total), "min_total_ms": min(total, default=None),
            "max_total_ms": max(total, default=None), "med_gbps": med(rates),
            "min_gbps": min(rates, default=None), "max_gbps": max(rates, default=None),
            "med_drain_ms": med([h["drain_ms"] for h in hs]),
            "med_swapin_ms": med([h["swapin_ms"] for h in hs]),
            "mean_total_ms": statistics.mean(total) if total else None,
            "med_moved_gib": med([(h["evict_bytes"] + h["swapin_bytes"]) / 2**30 for h in hs])}


def fmt(v, spec=".1f"):
    if v is None:
        return "-"
    return format(int(v), spec) if spec == "d" else format(v, spec)


def read_times(path):
    """times.txt as {key: (float or None, rc string)}."""
    times = {}
    for line in read(path).splitlines():
        parts = line.split()
        if len(parts) >= 2 and not parts[0].startswith("#"):
            try:
                times[parts[0]] = (float(parts[1]), parts[2] if len(parts) > 2 else "0")
            except ValueError:
                times[parts[0]] = (None, "?")
    return times


def together_makespan(times, prefix):
    """Makespan of the run `prefix` (both jobs started at <prefix>_start) and whether both exit 0."""
    start = times.get(f"{prefix}_start", (None, "?"))[0]
    ends = [times.get(f"{prefix}_{j}_end", (None, "?")) for j in ("A", "B")]
    ok = start is not None and all(e is not None and rc == "0" for e, rc in ends)
    rcs = ",".join(f"{j}={rc}" for j, (_, rc) in zip("AB", ends))
    if not ok:
        return None, rcs
    return max(e for e, _ in ends) - start, rcs


def compare_losses(ref_path, path):
    try:
        ref, got = loss_lines(read(ref_path)), loss_lines(read(path))
    except OSError as e:
        return f"cannot compare ({e.strerror})"
    if not ref:
        return "no step lines in the reference"
    return first_difference(ref, got)


def mem_pair_summary(d):
    """mem_pair.sh's report for one configuration folder; returns (text, ok)."""
    times = read_times(os.path.join(d, "times.txt"))
    lines, ok = [], True
    serial = 0.0
    for j in ("A", "B"):
        wall, rc = times.get(f"bare_{j}", (None, "?"))
        done = parse_done(read(os.path.join(d, f"bare_{j}.out"))) if os.path.exists(os.path.join(d, f"bare_{j}.out")) else None
        if wall is None or rc != "0" or not done:
            lines.append(f"bare {j}: FAILED (rc={rc})")
            ok, serial = False, None
            continue
        if serial is not None:
            serial += wall
        lines.append(f"bare {j}: {wall:.1f} s, steps {done.get('steps')}, reserved {done.get('reserved_gib')} GiB, "
                     f"gpu_ms {done.get('gpu_ms')}, cpu_ms {done.get('cpu_ms')}")
    together = None
    if "together_start" in times:
        together, rcs = together_makespan(times, "together")
        diffs = [compare_losses(os.path.join(d, f"bare_{j}.out"), os.path.join(d, f"together_{j}.out")) for j in "AB"]
        same = "identical" if not any(diffs) else "DIFFER (" + "; ".join(x for x in diffs if x) + ")"
        lines.append(f"together without gshare: makespan {fmt(together)} s ({rcs}), losses {same}")
        ok = ok and together is not None
    if serial:
        lines.append(f"serial {serial:.1f} s")
    tqs = sorted({int(k[2:-6]) for k in times if re.fullmatch(r"tq\d+_start", k)})
    for tq in tqs:
        sub = os.path.join(d, f"tq{tq}")
        makespan, rcs = together_makespan(times, f"tq{tq}")
        diffs = [compare_losses(os.path.join(d, f"bare_{j}.out"), os.path.join(sub, f"{j}.out")) for j in "AB"]
        losses = ("identical" if not any(diffs) else
                  "n/a" if any(x.startswith(("cannot", "no step")) for x in diffs if x) else "DIFFER")
        hs, _, count = collect_handoffs(sub)
        st = handoff_stats(hs)
        base = together if together is not None or "together_start" in times else serial
        ratio = makespan / base if makespan is not None and base else None
        line = (f"tq={tq} makespan={fmt(makespan)} serial={fmt(serial)} ratio={fmt(ratio, '.3f')} "
                f"handoffs={count} mean_handoff_ms={fmt(st['mean_total_ms'])} losses={losses}")
        if "together_start" in times:
            line += f" together={fmt(together)} baseline=together"
        line += " runs=" + ("ok" if makespan is not None else f"FAILED({rcs})")
        lines.append(line)
        for j, diff in zip("AB", diffs):
            if diff:
                lines.append(f"  tq={tq} losses {j}: {diff}")
        ok = ok and makespan is not None and losses == "identical"
    if not tqs:
        lines.append("no gshare runs")
        ok = False
    lines.append("mem_pair: " + ("OK" if ok else "FAILED"))
    return "\n".join(lines), ok


def mem_handoff_summary(d):
    """mem_handoff.sh's table: one row per size<N>/ folder; returns (text, ok)."""
    times = read_times(os.path.join(d, "times.txt")) if os.path.exists(os.path.join(d, "times.txt")) else {}
    sizes = sorted((float(m.group(1)), name) for name in os.listdir(d)
                   if os.path.isdir(os.path.join(d, name)) and (m := re.fullmatch(r"size([\d.]+)", name)))
    hdr = (f"{'GiB':>5} {'n':>3} {'total_ms med':>12} {'min':>8} {'max':>8} {'GB/s med':>8} {'min':>6} "
           f"{'max':>6} {'drain_ms':>8} {'swapin_ms':>9} {'moved GiB':>9} {'src':>6}  jobs")
    lines, ok = [hdr], bool(sizes)
    for gib, name in sizes:
        sub = os.path.join(d, name)
        hs, src, _ = collect_handoffs(sub)
        st = handoff_stats(hs)
        problems = []
        for j in ("A", "B"):
            rc = times.get(f"{name}_{j}_end", (None, "?"))[1]
            out = os.path.join(sub, f"{j}.out")
            done = parse_done(read(out)) if os.path.exists(out) else None
            if rc != "0" or not done or done.get("mismatches", "0") != "0":
                problems.append(f"{j} rc={rc}" + (f" mismatches={done.get('mismatches')}" if done else " no done line"))
        jobs = "ok" if not problems else "FAILED(" + ", ".join(problems) + ")"
        ok = ok and not problems and st["n"] > 0
        lines.append(f"{gib:>5g} {st['n']:>3} {fmt(st['med_total_ms']):>12} {fmt(st['min_total_ms']):>8} "
                     f"{fmt(st['max_total_ms']):>8} {fmt(st['med_gbps']):>8} {fmt(st['min_gbps']):>6} "
                     f"{fmt(st['max_gbps']):>6} {fmt(st['med_drain_ms']):>8} {fmt(st['med_swapin_ms']):>9} "
                     f"{fmt(st['med_moved_gib'], '.2f'):>9} {src:>6}  {jobs}")
    lines.append("GB/s = (evicted + swapped-in bytes) / total_ms; total_ms = DROP sent .. new holder may run")
    lines.append("mem_handoff: " + ("OK" if ok else "FAILED"))
    return "\n".join(lines), ok


STRESS_BACKENDS = ("native", "async", "expandable")  # mem_stress.py --alloc-backend


def mem_stress_summary(d, min_swaps, target):
    """mem_stress.sh's verdict; returns (text, ok). Its jobs are the <backend>.out files in d."""
    times = read_times(os.path.join(d, "times.txt"))
    samples = read_samples(os.path.join(d, "status.jsonl"))
    lines, ok, reached = [], True, True
    labels = [b for b in STRESS_BACKENDS if os.path.exists(os.path.join(d, f"{b}.out"))]
    if not labels:
        return "mem_stress: FAIL (no job output)", False
    for label, name in ((b, f"stress-{b}") for b in labels):
        rc = times.get(f"stress_{label}_end", (None, "?"))[1]
        out = os.path.join(d, f"{label}.out")
        done = parse_done(read(out)) if os.path.exists(out) else None
        backend = done.get("backend", "-") if done else "-"
        on_gpu = done is not None and done.get("device") == "cuda"
        wrong_backend = on_gpu and ((label == "async" and backend != "cudaMallocAsync") or
                                    (label == "expandable" and done.get("expandable", "0") == "0"))
        swaps_in = max_memory_field(samples, name, "swaps_in")
        swaps_out = max_memory_field(samples, name, "swaps_out")
        bytes_in = max_memory_field(samples, name, "bytes_in")
        good = (rc == "0" and done is not None and done.get("mismatches") == "0" and "error" not in done
                and not wrong_backend)
        enough = swaps_in is not None and swaps_in >= min_swaps
        reached = reached and swaps_in is not None and swaps_in >= target
        lines.append(f"{name}: rc={rc} cycles={done.get('cycles') if done else '-'} "
                     f"mismatches={done.get('mismatches') if done else '-'} swaps_in={fmt(swaps_in, 'd')} "
                     f"swaps_out={fmt(swaps_out, 'd')} bytes_in={fmt(bytes_in, 'd')} backend={backend}"
                     + (f" expandable={done.get('expandable')}" if label == "expandable" and done else "")
                     + ("" if good else " FAILED") + ("" if enough else f" (fewer than {min_swaps} swaps in)"))
        ok = ok and good and enough
    lines.append(f"target {target} swaps in per job: " + ("reached" if reached else "not reached"))
    lines.append("mem_stress: " + ("PASS" if ok else "FAIL"))
    return "\n".join(lines), ok


def selftest():
    """Checks on synthetic text; returns the number of checks passed (raises on failure)."""
    import tempfile
    n = 0
    log = ("gshare: scheduler on\n"
           "[2026-11-23 10:00:00.000] [info] [42] handoff GPU-1a2b: job 1 -> job 2: drain 12.5 ms, "
           "evicted 1000000000 bytes, swapped in 3000000000 bytes in 40.0 ms, total 80 ms\n"
           "gshare: handoff 0: job 2 -> job 1: drain 1 ms, evicted 2000000000 bytes, swapped in "
           "2000000000 bytes in 30.5 ms, total 100.0 ms\n")
    waited = ("gshare: handoff GPU-1a2b: job 0 -> job 2: drain 0 ms, evicted 0 bytes (checkpoints 5 "
              "ms), swapped in 134217728 bytes in 2415 ms (2400 ms of it waiting for room), other "
              "263 ms, total 2678 ms (bound 2453 ms)\n")
    assert abs(idle_together([(0, 1), (2, 3), (4, 5)], [(0.5, 2.5), (4.9, 6)]) - 1.1) < 1e-9
    assert idle_together([(0, 1)], [(1, 2)]) == 0 and idle_together([], [(0, 1)]) == 0
    p, o = phase_offset([(i, i + .4) for i in range(6)], [(i + .2, i + .6) for i in range(6)])
    assert abs(p - 1) < 1e-9 and abs(o - .2) < 1e-9, (p, o)
    assert phase_offset([(0, 1)], [(0, 1)]) is None
    assert STRETCH_RE.search("GPU-1: ... job 12's next gap stretched to 282 ms (shift 256 ms)").groups() == ("12", "282")
    n += 1
    hs = handoffs_from_log(log)
    assert [(h["gpu"], h["from"], h["to"]) for h in hs] == [("GPU-1a2b", "1", "2"), ("0", "2", "1")], hs
    hw = handoffs_from_log(waited)
    assert len(hw) == 1 and hw[0]["swapin_ms"] == 2415 and hw[0]["total_ms"] == 2678, hw
    assert hs[0]["evict_bytes"] == 10**9 and hs[1]["swapin_ms"] == 30.5, hs
    n += 1
    st = handoff_stats(hs)
    assert st["n"] == 2 and st["med_total_ms"] == 90 and st["min_gbps"] == 40 and st["max_gbps"] == 50, st
    assert st["mean_total_ms"] == 90 and abs(st["med_drain_ms"] - 6.75) < 1e-9, st
    n += 1
    last = {"from": 1, "to": 2, "drain_ms": 5, "evict_bytes": 10, "swapin_bytes": 20, "swapin_ms": 3, "total_ms": 9}
    gpu = lambda c, lh: {"uuid": "GPU-x", "mode": "exclusive", "handoffs": c, "last_handoff": lh}  # noqa: E731
    samples = [{"gpus": [gpu(0, None)]}, {"gpus": [gpu(1, last)]}, {"gpus": [gpu(1, last)]},
               {"gpus": [gpu(3, dict(last, total_ms=11))]}]
    hs = handoffs_from_status(samples)
    assert [h["total_ms"] for h in hs] == [9, 11] and hs[0]["to"] == "2", hs
    assert handoff_counter(samples) == 3
    n += 1
    status = {"gpus": [gpu(1, last)], "jobs": [
        {"id": 1, "name": "stress-native", "state": "RUNNING", "lease": "holding", "argv": ["x"],
         "memory": {"engine": "swap", "swaps_in": 7}},
        {"id": 0, "name": "old", "state": "COMPLETED", "argv": ["y"]}]}
    line = status_line(status, 5.0)
    assert line["t"] == 5.0 and [j["name"] for j in line["jobs"]] == ["stress-native"], line
    assert "argv" not in line["jobs"][0] and job_memory(line, "stress-native")["swaps_in"] == 7
    assert max_memory_field([line, {"jobs": []}], "stress-native", "swaps_in") == 7
    assert max_memory_field([line], "nobody", "swaps_in") is None
    n += 1
    with tempfile.TemporaryDirectory() as d:
        def put(path, text):
            os.makedirs(os.path.dirname(os.path.join(d, path)), exist_ok=True)
            with open(os.path.join(d, path), "w") as f:
                f.write(text)
        out = "step 0 loss 5.5\nstep 10 loss 4.25\ndone steps=11 seconds=50.0 reserved_gib=44.1 gpu_ms=260 cpu_ms=29 device=cuda\n"
        for p in ("bare_A.out", "bare_B.out", "tq5/A.out", "tq5/B.out", "tq20/A.out"):
            put(p, out)
        put("tq20/B.out", out.replace("4.25", "4.26"))
        put("tq5/daemon.log", log)
        put("tq20/status.jsonl", json.dumps({"t": 1, "gpus": [gpu(4, last)]}) + "\nnot json\n")
        put("times.txt", "# key value rc\nbare_A 50.0 0\nbare_B 30.0 0\ntq5_start 1000.0\n"
            "tq5_A_end 1090.0 0\ntq5_B_end 1100.0 0\ntq20_start 2000\ntq20_A_end 2070 0\ntq20_B_end 2080 0\n")
        text, ok = mem_pair_summary(d)
        assert ("tq=5 makespan=100.0 serial=80.0 ratio=1.250 handoffs=2 mean_handoff_ms=90.0 "
                "losses=identical runs=ok") in text, text
        assert "tq=20 makespan=80.0 serial=80.0 ratio=1.000 handoffs=4 mean_handoff_ms=9.0 losses=DIFFER" in text, text
        assert "tq=20 losses B: line 2" in text and not ok and text.endswith("mem_pair: FAILED"), text
        n += 1
        put("together_A.out", out)
        put("together_B.out", out)
        put("tq20/B.out", out)
        with open(os.path.join(d, "times.txt"), "a") as f:
            f.write("together_start 500\ntogether_A_end 540 0\ntogether_B_end 550.0 0\n")
        text, ok = mem_pair_summary(d)
        assert "together without gshare: makespan 50.0 s (A=0,B=0), losses identical" in text, text
        assert "tq=5 makespan=100.0 serial=80.0 ratio=2.000 " in text and "together=50.0 baseline=together" in text, text
        assert ok, text
        n += 1
    with tempfile.TemporaryDirectory() as d:
        for size, lg in (("8", log), ("16", "")):
            os.makedirs(os.path.join(d, f"size{size}"))
            with open(os.path.join(d, f"size{size}", "daemon.log"), "w") as f:
                f.write(lg)
            for j in "AB":
                with open(os.path.join(d, f"size{size}", f"{j}.out"), "w") as f:
                    f.write("cycle 50 ok\ndone cycles=60 mismatches=0 device=cuda\n")
        with open(os.path.join(d, "size16", "status.jsonl"), "w") as f:
            f.write(json.dumps({"t": 1, "gpus": [gpu(1, last)]}) + "\n")
        with open(os.path.join(d, "times.txt"), "w") as f:
            f.write("size8_A_end 10 0\nsize8_B_end 10 0\nsize16_A_end 10 0\nsize16_B_end 10 1\n")
        text, ok = mem_handoff_summary(d)
        rows = text.splitlines()
        assert rows[1].split()[:9] == ["8", "2", "90.0", "80.0", "100.0", "45.0", "40.0", "50.0", "6.8"], rows
        assert rows[1].endswith("log  ok") and rows[2].split()[:3] == ["16", "1", "9.0"], rows
        assert "FAILED(B rc=1 mismatches=0)" in rows[2] and not ok, text
        n += 1
    with tempfile.TemporaryDirectory() as d:
        mem = lambda name, k: {"name": name, "state": "RUNNING", "memory": {"swaps_in": k, "swaps_out": k}}  # noqa: E731
        with open(os.path.join(d, "status.jsonl"), "w") as f:
            for k in (1, 500, 1001):
                f.write(json.dumps({"t": k, "gpus": [], "jobs": [mem("stress-native", k), mem("stress-async", k - 1)]}) + "\n")
        for label, mism in (("native", 0), ("async", 0)):
            with open(os.path.join(d, f"{label}.out"), "w") as f:
                f.write(f"cycle 50 ok\ndone cycles=2000 mismatches={mism} tensors=9 "
                        f"backend={'cudaMallocAsync' if label == 'async' else 'native'} device=cuda\n")
        with open(os.path.join(d, "times.txt"), "w") as f:
            f.write("stress_native_end 100 0\nstress_async_end 100 0\n")
        text, ok = mem_stress_summary(d, 100, 1001)
        assert ok and "stress-native: rc=0 cycles=2000 mismatches=0 swaps_in=1001" in text, text
        assert "target 1001 swaps in per job: not reached" in text, text
        assert "per job: reached" in mem_stress_summary(d, 100, 1000)[0]
        assert "stress-async: rc=0 cycles=2000 mismatches=0 swaps_in=1000 swaps_out=1000 bytes_in=- " \
            "backend=cudaMallocAsync" in text, text
        with open(os.path.join(d, "async.out"), "a") as f:
            f.write("done cycles=2001 mismatches=0 backend=native device=cuda\n")
        assert mem_stress_summary(d, 100, 1000)[0].endswith("FAIL")
        with open(os.path.join(d, "async.out"), "a") as f:
            f.write("done cycles=2001 mismatches=3 device=cuda\n")
        text, ok = mem_stress_summary(d, 100, 1000)
        assert not ok and "stress-async: rc=0 cycles=2001 mismatches=3" in text and text.endswith("FAIL"), text
        n += 1
    return n
