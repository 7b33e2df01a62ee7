#!/usr/bin/env python3
"""Request by request: an LLM service run against another run of the same arrivals.

    python3 test/bench/llm_pairs.py BASE_DETAIL CASE_DETAIL [CASE_DETAIL...] [--spans 0,6,12,18,30]

Each DETAIL is llm_service.py's --detail-out file (one request a line: arrival s into the
window, TTFT ms, TPOT ms). Runs with the same --seed have the same arrivals, so request i of a
case pairs with request i of the base (the service alone). Per case it prints the median of
TTFT case ÷ base and of TPOT case ÷ base over all pairs and over each span of arrival times
(--spans, seconds, edges; default 0,6,12,18,30), and the case's three slowest requests beside
the base's time for the same request.

Why: a window of 25-30 s at 2.5 requests/s has 60-75 requests, so a TTFT p99 is close to the
slowest one and moves by tens of per cent between runs of the same setting; the median of the
paired ratios says whether every request got slower, and the spans say when (a training's
arrival, start-up or first allocations, in the no-room case). Exit 0; 2 on unreadable input."""
import argparse
import statistics
import sys


def read_detail(path):
    """[(arrival_s, ttft_ms, tpot_ms)] of path, in arrival order."""
    rows = []
    with open(path) as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 3:
                rows.append(tuple(float(x) for x in fields[:3]))
    return rows


def ratio_medians(base, case, pick):
    """(n, median TTFT ratio, median TPOT ratio) over the pairs whose index pick accepts."""
    idx = [i for i in range(min(len(base), len(case))) if pick(i)]
    if not idx:
        return 0, float("nan"), float("nan")
    ttft = statistics.median(case[i][1] / base[i][1] for i in idx)
    tpot = statistics.median(case[i][2] / base[i][2] for i in idx)
    return len(idx), ttft, tpot


def selftest():
    """Checks the pairing on synthetic runs: a case whose TTFT is 1.2 x the base's before 6 s and
    1.0 x after, its TPOT 1.1 x throughout, and one request slower than the rest. Returns how
    many checks passed (an AssertionError otherwise)."""
    base = [(i * 0.5, 10.0 + i % 3, 5.0) for i in range(24)]  # arrivals 0 .. 11.5 s
    case = [(a, t * (1.2 if a < 6 else 1.0), p * 1.1) for a, t, p in base]
    case[20] = (case[20][0], 50.0, case[20][2])
    n, ttft, tpot = ratio_medians(base, case, lambda i: base[i][0] < 6)
    assert (n, round(ttft, 6), round(tpot, 6)) == (12, 1.2, 1.1), (n, ttft, tpot)
    n, ttft, _ = ratio_medians(base, case, lambda i: base[i][0] >= 6)
    assert n == 12 and ttft == 1.0, (n, ttft)
    n, ttft, _ = ratio_medians(base, case[:5], lambda i: True)  # pairs only what both have
    assert n == 5 and round(ttft, 6) == 1.2, (n, ttft)
    assert ratio_medians(base, case, lambda i: False)[0] == 0
    return 4


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base")
    ap.add_argument("cases", nargs="+")
    ap.add_argument("--spans", default="0,6,12,18,30")
    args = ap.parse_args()
    try:
        base = read_detail(args.base)
        edges = [float(x) for x in args.spans.split(",")]
        cases = [(path, read_detail(path)) for path in args.cases]
    except (OSError, ValueError) as e:
        print(f"llm_pairs: {e}", file=sys.stderr)
        return 2
    for path, case in cases:
        n, ttft, tpot = ratio_medians(base, case, lambda i: True)
        print(f"pairs case={path} n={n} base_n={len(base)} case_n={len(case)} "
              f"ttft_ratio_median={ttft:.3f} tpot_ratio_median={tpot:.3f}")
        for lo, hi in zip(edges, edges[1:]):
            n, ttft, tpot = ratio_medians(base, case, lambda i: lo <= base[i][0] < hi)
            print(f"  span={lo:g}-{hi:g}s n={n} ttft_ratio_median={ttft:.3f} "
                  f"tpot_ratio_median={tpot:.3f}")
        paired = range(min(len(base), len(case)))
        for i in sorted(paired, key=lambda i: -case[i][1])[:3]:
            print(f"  slow request={i} arrival_s={case[i][0]:.2f} ttft_ms={case[i][1]:.2f} "
                  f"base_ttft_ms={base[i][1]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
