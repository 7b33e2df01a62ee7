#!/usr/bin/env python3
"""Result parsing for test/bench/overhead.sh, pair.sh, batch.sh and the memory benchmarks (mem_*.sh,
parsed in memlib.py) (pure Python, no GPU needed).

    benchlib.py done FILE                      -> "<seconds> <train_seconds> <steps>" from the
                                                  example's `done ...` line (exit 1 if none)
    benchlib.py overhead RAW                   -> mean/min per workload and mode + overhead %
    benchlib.py same-losses A B                -> exit 0 if the `step <i> loss <x>` lines of two
                                                  outputs are identical, else print the first
                                                  difference and exit 1
    benchlib.py pair DIR                       -> the pair demo's summary (see pair.sh)
    benchlib.py batch DIR T0                   -> batch.sh's timeline and order check (exit 1
                                                  when a job did not complete or started out
                                                  of order)
    benchlib.py done-get FILE KEY              -> one value of the `done ...` line (exit 1 if none)
    benchlib.py status-line < STATUS_JSON      -> one compact JSON line of `gshare status --json`
                                                  with the time ("t"), for the pollers below
    benchlib.py swaps-in NAME... < STATUS_JSON -> memory.swaps_in of each named job (- if none)
    benchlib.py handoff-count < STATUS_JSON    -> the GPUs' hand-off counters, summed
    benchlib.py mem-pair DIR                   -> mem_pair.sh's summary of one configuration
    benchlib.py mem-handoff DIR                -> mem_handoff.sh's table per size
    benchlib.py mem-stress DIR MIN_SWAPS TARGET -> mem_stress.sh's verdict (exit 1 on FAIL)
    benchlib.py selftest                       -> checks the parsers on synthetic text

RAW (overhead.sh's $OUT/overhead.txt) has one line per run:
    <workload> <mode> <rep> <rc> <seconds> <train_seconds>
where mode is `bare` or `gshare` and seconds / train_seconds come from the example's done line
(`-` when the run failed). Lines starting with `#` are comments.
"""
import json
import os
import re
import statistics
import sys

DONE_RE = re.compile(r"^done\b(.*)$")
STEP_RE = re.compile(r"^step (\d+) loss (\S+)$")


def parse_done(text):
    """The key=value pairs of the last `done ...` line, or None."""
    found = None
    for line in text.splitlines():
        m = DONE_RE.match(line.strip())
        if m:
            found = dict(kv.split("=", 1) for kv in m.group(1).split() if "=" in kv)
    return found


def loss_lines(text):
    return [line.strip() for line in text.splitlines() if STEP_RE.match(line.strip())]


def first_difference(a_lines, b_lines):
    """None if equal, else a message naming the first differing line."""
    for i, (x, y) in enumerate(zip(a_lines, b_lines)):
        if x != y:
            return f"line {i + 1}: {x!r} != {y!r}"
    if len(a_lines) != len(b_lines):
        return f"{len(a_lines)} step lines vs {len(b_lines)}"
    return None


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def overhead_summary(raw_text):
    """Returns the summary text and a dict {(workload, mode): [(seconds, train_seconds)]}."""
    runs, failed = {}, []
    for line in raw_text.splitlines():
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        if len(parts) != 6:
            raise ValueError(f"bad overhead line: {line!r}")
        workload, mode, rep, rc, secs, train = parts
        if rc != "0" or secs == "-" or train == "-":
            failed.append(f"{workload} {mode} rep {rep} rc={rc}")
            continue
        runs.setdefault((workload, mode), []).append((float(secs), float(train)))
    out = []
    hdr = f"{'workload':<10} {'mode':<7} {'n':>2} {'wall_mean':>10} {'wall_min':>9} {'train_mean':>11} {'train_min':>10}"
    out.append(hdr)
    for (workload, mode), vals in sorted(runs.items()):
        w = [v[0] for v in vals]
        t = [v[1] for v in vals]
        out.append(f"{workload:<10} {mode:<7} {len(vals):>2} {statistics.mean(w):>10.3f} {min(w):>9.3f} "
                   f"{statistics.mean(t):>11.3f} {min(t):>10.3f}")
    for workload in sorted({k[0] for k in runs}):
        bare, gs = runs.get((workload, "bare")), runs.get((workload, "gshare"))
        if not bare or not gs:
            out.append(f"{workload}: overhead n/a (missing bare or gshare runs)")
            continue

        def pct(idx, fn):
            b = fn([v[idx] for v in bare])
            g = fn([v[idx] for v in gs])
            return 100.0 * (g - b) / b

        out.append(f"{workload}: overhead wall {pct(0, statistics.mean):+.2f}% (mean) {pct(0, min):+.2f}% (min); "
                   f"train loop {pct(1, statistics.mean):+.2f}% (mean) {pct(1, min):+.2f}% (min)")
    for f in failed:
        out.append(f"FAILED run: {f}")
    return "\n".join(out), runs, failed


def pair_summary(d):
    """Summary of pair.sh's folder. times.txt has `<key> <epoch seconds or duration> [rc]` lines:
    bare_cnn/bare_gpt (wall seconds, rc), shared_start (epoch), shared_cnn_end/shared_gpt_end
    (epoch, rc). Returns (text, ok)."""
    times = {}
    for line in read(os.path.join(d, "times.txt")).splitlines():
        parts = line.split()
        if len(parts) >= 2 and not parts[0].startswith("#"):
            try:
                times[parts[0]] = (float(parts[1]), parts[2] if len(parts) > 2 else "0")
            except ValueError:
                times[parts[0]] = (None, "?")
    lines, ok = [], True
    serial = 0.0
    for job in ("cnn", "gpt"):
        wall, rc = times.get(f"bare_{job}", (None, "?"))
        if wall is None or rc != "0":
            lines.append(f"bare {job}: FAILED (rc={rc})")
            ok = False
            continue
        serial += wall
        lines.append(f"bare {job}: {wall:.1f} s")
    start = times.get("shared_start", (None, "?"))[0]
    ends = {}
    for job in ("cnn", "gpt"):
        end, rc = times.get(f"shared_{job}_end", (None, "?"))
        if start is None or end is None or rc != "0":
            lines.append(f"shared {job}: FAILED (rc={rc})")
            ok = False
            continue
        ends[job] = end
        lines.append(f"shared {job}: turnaround {end - start:.1f} s")
    for job in ("cnn", "gpt"):
        try:
            bare = loss_lines(read(os.path.join(d, f"bare_{job}.out")))
            shared = loss_lines(read(os.path.join(d, f"shared_{job}.out")))
        except OSError as e:
            lines.append(f"losses {job}: cannot compare ({e})")
            ok = False
            continue
        diff = first_difference(bare, shared) if bare else "no step lines in the bare run"
        if diff is None:
            lines.append(f"losses {job}: identical ({len(bare)} lines)")
        else:
            lines.append(f"losses {job}: DIFFERENT: {diff}")
            ok = False
    if start is not None and len(ends) == 2 and serial > 0:
        makespan = max(ends.values()) - start
        lines.append(f"serial {serial:.1f} s; makespan {makespan:.1f} s; makespan/serial {makespan / serial:.3f}")
    lines.append("pair: " + ("OK" if ok else "FAILED"))
    return "\n".join(lines), ok


def holder_segments(samples, t0):
    """[(start, end, holder)] from status samples [{"t", "gpus": [{"holder"}]}], times - t0;
    holder None when nobody held the first GPU."""
    segments = []
    for sample in samples:
        gpus = sample.get("gpus") or [{}]
        holder = gpus[0].get("holder")
        t = sample["t"] - t0
        if segments and segments[-1][2] == holder:
            segments[-1][1] = t
        else:
            if segments:
                segments[-1][1] = t
            segments.append([t, t, holder])
    return [tuple(s) for s in segments]


def batch_order_problems(jobs, ids):
    """What is wrong with the batch's outcome (batch.sh's six jobs, `ids` in submission order)."""
    by_id = {j["id"]: j for j in jobs}
    problems = [f"job {i} is {by_id[i]['state'] if i in by_id else 'missing'}"
                for i in ids if by_id.get(i, {}).get("state") != "COMPLETED"]
    if problems:
        return problems
    start = {i: by_id[i]["start_time"] for i in ids}
    end = {i: by_id[i]["end_time"] for i in ids}
    j1, j2, j3, j4, j5, j6 = ids
    if not max(start[j3], start[j4]) <= min(start[j1], start[j2]):
        problems.append("priorities 10 and 5 did not start before priority 0")
    if not start[j1] <= start[j2]:
        problems.append("equal priorities did not start in submission order")
    if not start[j5] >= end[j3]:
        problems.append(f"job {j5} started before job {j3} (its afterok dependency) ended")
    if not start[j6] >= max(start[j1], start[j2]):
        problems.append("priority -5 started before priority 0")
    return problems


def batch_summary(directory, t0):
    """batch.sh's report: per job submit/start/end relative to t0, the lease timeline, checks."""
    jobs = json.loads(read(os.path.join(directory, "queue.json")))["jobs"]
    samples = [json.loads(line) for line in read(os.path.join(directory, "status.jsonl")).splitlines()
               if line.strip()]
    ids = sorted(j["id"] for j in jobs)[-6:]
    lines = ["job name   prio state      submit   start     end   (s after submission)"]
    for j in sorted((j for j in jobs if j["id"] in ids), key=lambda j: j["id"]):
        rel = lambda v: f"{v - t0:7.1f}" if v is not None else "      -"
        lines.append(f"{j['id']:3d} {j['name']:6s} {j['priority']:4d} {j['state']:9s} "
                     f"{rel(j['submit_time'])} {rel(j['start_time'])} {rel(j['end_time'])}")
    names = {j["id"]: j["name"] for j in jobs}
    lines.append("lease timeline (GPU 0 holder, from `gshare status` every 0.5 s):")
    segments = holder_segments(samples, t0)
    for start, end, holder in segments:
        who = f"job {holder} ({names.get(holder, '?')})" if holder is not None else "nobody"
        lines.append(f"  {start:7.1f} - {end:7.1f} s  {who}")
    handovers = sum(1 for a, b in zip(segments, segments[1:]) if a[2] is not None and b[2] is not None)
    lines.append(f"handovers between jobs: {handovers}")
    ends = [j["end_time"] for j in jobs if j["id"] in ids and j["end_time"] is not None]
    if ends:
        lines.append(f"makespan {max(ends) - t0:.1f} s")
    problems = batch_order_problems(jobs, ids)
    lines.extend("PROBLEM: " + p for p in problems)
    lines.append("batch: " + ("OK" if not problems else "FAILED"))
    return "\n".join(lines), not problems


def selftest():
    text = "noise\nstep 0 loss 2.302585\nstep 10 loss 1.500000\ndone steps=11 seconds=3.5 train_seconds=2.25 device=cuda\n"
    d = parse_done(text)
    assert d == {"steps": "11", "seconds": "3.5", "train_seconds": "2.25", "device": "cuda"}, d
    assert parse_done("nothing here") is None
    assert loss_lines(text) == ["step 0 loss 2.302585", "step 10 loss 1.500000"]
    assert first_difference(["a", "b"], ["a", "b"]) is None
    assert "line 2" in first_difference(["a", "b"], ["a", "c"])
    assert "2 step lines vs 1" == first_difference(["a", "b"], ["a"])
    raw = ("# workload mode rep rc seconds train_seconds\n"
           "gpt bare 1 0 30.0 25.0\ngpt gshare 1 0 30.6 25.2\n"
           "gpt bare 2 0 31.0 25.5\ngpt gshare 2 0 31.2 25.6\ngpt gshare 3 1 - -\n")
    summary, runs, failed = overhead_summary(raw)
    assert len(runs[("gpt", "bare")]) == 2 and len(runs[("gpt", "gshare")]) == 2, runs
    assert failed == ["gpt gshare rep 3 rc=1"], failed
    assert "overhead wall +1.31% (mean) +2.00% (min)" in summary, summary
    samples = [{"t": 10.0, "gpus": [{"holder": 3}]}, {"t": 10.5, "gpus": [{"holder": 3}]},
               {"t": 11.0, "gpus": [{"holder": 4}]}, {"t": 11.5, "gpus": [{"holder": None}]}]
    assert holder_segments(samples, 10.0) == [(0.0, 1.0, 3), (1.0, 1.5, 4), (1.5, 1.5, None)]
    done = lambda i, s, e: {"id": i, "state": "COMPLETED", "start_time": s, "end_time": e}
    good = [done(1, 30, 60), done(2, 31, 61), done(3, 1, 29), done(4, 1, 30), done(5, 29, 50), done(6, 60, 80)]
    assert batch_order_problems(good, [1, 2, 3, 4, 5, 6]) == []
    bad = good[:4] + [done(5, 20, 50), good[5]]
    assert "started before job 3" in batch_order_problems(bad, [1, 2, 3, 4, 5, 6])[0]
    import memlib  # the memory benchmarks' parsers (test/bench/memlib.py)
    import phase_stats  # the service in turns beside trainings and alone (test/bench/phase_stats.py)
    import cpu_sampler  # the busiest threads and their CPUs (test/bench/cpu_sampler.py)
    import mps_floor  # a client's kernel profile against bare (test/bench/mps_floor.py)
    import train_loop  # the batch trainings' step loop (test/bench/train_loop.py)
    import llm_pairs  # an LLM service's requests against another run's (test/bench/llm_pairs.py)
    passed = (10 + memlib.selftest() + phase_stats.selftest() + cpu_sampler.selftest()
              + mps_floor.selftest() + train_loop.selftest() + llm_pairs.selftest())
    print(f"benchlib selftest: {passed} passed, 0 failed")
    return 0


def mem_command(cmd, args):
    """The memory benchmarks' subcommands (see the docstring); None when cmd is not one."""
    import time

    import memlib
    if cmd == "done-get" and len(args) == 2:
        d = parse_done(read(args[0]))
        if not d or args[1] not in d:
            print("-")
            return 1
        print(d[args[1]])
        return 0
    if cmd in ("status-line", "swaps-in", "handoff-count"):
        status = json.load(sys.stdin)
        if cmd == "status-line" and not args:
            print(json.dumps(memlib.status_line(status, time.time()), separators=(",", ":")))
            return 0
        if cmd == "swaps-in" and args:
            mems = [memlib.job_memory(status, name) for name in args]
            print(" ".join(str(m.get("swaps_in", "-")) if m else "-" for m in mems))
            return 0
        if cmd == "handoff-count" and not args:
            print(memlib.handoff_counter([status]))
            return 0
        return None
    summaries = {"mem-pair": (1, memlib.mem_pair_summary), "mem-handoff": (1, memlib.mem_handoff_summary),
                 "mem-stress": (3, lambda d, lo, hi: memlib.mem_stress_summary(d, int(lo), int(hi)))}
    if cmd in summaries and len(args) == summaries[cmd][0]:
        text, ok = summaries[cmd][1](*args)
        print(text)
        return 0 if ok else 1
    return None


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, args = argv[1], argv[2:]
    try:
        if cmd == "done" and len(args) == 1:
            d = parse_done(read(args[0]))
            if not d or "seconds" not in d:
                print("- - -")
                return 1
            print(d.get("seconds", "-"), d.get("train_seconds", "-"), d.get("steps", "-"))
            return 0
        if cmd == "overhead" and len(args) == 1:
            summary, runs, failed = overhead_summary(read(args[0]))
            print(summary)
            return 1 if failed or not runs else 0
        if cmd == "same-losses" and len(args) == 2:
            a, b = loss_lines(read(args[0])), loss_lines(read(args[1]))
            diff = first_difference(a, b) if a else "no step lines in " + args[0]
            if diff:
                print(f"losses differ: {diff}")
                return 1
            print(f"losses identical ({len(a)} lines)")
            return 0
        if cmd == "pair" and len(args) == 1:
            text, ok = pair_summary(args[0])
            print(text)
            return 0 if ok else 1
        if cmd == "batch" and len(args) == 2:
            text, ok = batch_summary(args[0], float(args[1]))
            print(text)
            return 0 if ok else 1
        if cmd == "selftest" and not args:
            return selftest()
        rc = mem_command(cmd, args)
        if rc is not None:
            return rc
    except (OSError, ValueError) as e:
        print(f"benchlib: {e}", file=sys.stderr)
        return 2
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
