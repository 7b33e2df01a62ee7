#!/usr/bin/env python3
"""Where a fitting pair's makespan goes: start-up, the overlap's throughput, the tail alone.

    python3 test/bench/share_pair_overlap.py PAIR_DIR      (share_paths.sh's $OUT/share/pair)

For every case folder of share_paths.sh's pair part (bare, mps, gshare, gmps) it reads
times.txt (`start`, `<job>_end`) and the jobs' step logs (`<step> <time.time()> <loss>`), and
prints per job when its first and last steps came (seconds after both were started) and, over
the overlap (from 1 s after the later first step to the earlier last step), each job's step
rate as a fraction of its rate alone (the alone_gpt / alone_cnn folders, steps 10..last) and
their sum: the GPU throughput the sharing mechanism delivers while both run (1.0: as good as
one after the other; time-slicing ~0.95-1.0; above 1: the two overlap on the GPU). Also each
job's rate once the other has ended (the sharing layer's cost on a job running by itself).
"""
import os
import sys


def steps(path):
    out = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) == 3:
                out.append(float(p[1]))
    return out


def times(path):
    t = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 2 and not line.startswith("#"):
                t[p[0]] = float(p[1])
    return t


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    alone = {}
    for k in ("gpt", "cnn"):
        s = steps(os.path.join(d, f"alone_{k}", f"{k}.log"))
        alone[k] = (len(s) - 10) / (s[-1] - s[9])
    print("alone rates: " + ", ".join(f"{k} {r:.2f} steps/s" for k, r in alone.items()))
    for c in ("bare", "mps", "gshare", "gmps"):
        if not os.path.isdir(os.path.join(d, c)):
            continue
        t = times(os.path.join(d, c, "times.txt"))
        t0 = t["start"]
        s = {k: steps(os.path.join(d, c, f"{k}.log")) for k in ("gpt", "cnn")}
        lo = max(v[0] for v in s.values()) + 1.0
        hi = min(v[-1] for v in s.values())
        parts, total = [], 0.0
        for k, v in s.items():
            rate = sum(1 for x in v if lo <= x <= hi) / (hi - lo)
            total += rate / alone[k]
            parts.append(f"{k} {rate:.2f}/s ({rate / alone[k]:.0%})")
        first = " ".join(f"{k}_first={v[0] - t0:.2f} {k}_last={v[-1] - t0:.2f}" for k, v in s.items())
        # The job that ran on alone after the other's last step.
        late = max(s, key=lambda k: s[k][-1])
        other_end = min(v[-1] for v in s.values())
        tail = [x for x in s[late] if x > other_end + 0.5]
        tail_rate = (len(tail) - 1) / (tail[-1] - tail[0]) if len(tail) > 2 else float("nan")
        print(f"{c:7s} makespan={max(t[f'{k}_end'] for k in s) - t0:.2f} {first} | "
              f"overlap {hi - lo:.1f} s: {', '.join(parts)}, sum {total:.3f} | "
              f"{late} after the other {tail_rate:.2f}/s ({tail_rate / alone[late]:.0%})")


if __name__ == "__main__":
    main()
