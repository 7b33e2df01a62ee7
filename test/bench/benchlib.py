#!/usr/bin/env python3
"""Result parsing for test/bench/overhead.sh and test/bench/pair.sh (pure Python, no GPU needed).

    benchlib.py done FILE                      -> "<seconds> <train_seconds> <steps>" from the
                                                  example's `done ...` line (exit 1 if none)
    benchlib.py overhead RAW                   -> mean/min per workload and mode + overhead %
    benchlib.py same-losses A B                -> exit 0 if the `step <i> loss <x>` lines of two
                                                  outputs are identical, else print the first
                                                  difference and exit 1
    benchlib.py pair DIR                       -> the pair demo's summary (see pair.sh)
    benchlib.py selftest                       -> checks the parsers on synthetic text

RAW (overhead.sh's $OUT/overhead.txt) has one line per run:
    <workload> <mode> <rep> <rc> <seconds> <train_seconds>
where mode is `bare` or `gshare` and seconds / train_seconds come from the example's done line
(`-` when the run failed). Lines starting with `#` are comments.
"""
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
    print("benchlib selftest: 7 passed, 0 failed")
    return 0


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
        if cmd == "selftest" and not args:
            return selftest()
    except (OSError, ValueError) as e:
        print(f"benchlib: {e}", file=sys.stderr)
        return 2
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
