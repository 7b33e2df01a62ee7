#!/usr/bin/env python3
"""Request by request: an LLM service run against another run of the same arrivals.

    python3 test/bench/llm_pairs.py BASE_DETAIL CASE_DETAIL [CASE_DETAIL...] [--spans 0,6,12,18,30]
    python3 test/bench/llm_pairs.py --pool [--after S] BASE_1 CASE_1 [BASE_2 CASE_2 ...]

Each DETAIL is llm_service.py's --detail-out file (one request a line: arrival s into the
window, TTFT ms, TPOT ms). Runs with the same --seed have the same arrivals, so request i of a
case pairs with request i of the base (the service alone). Per case it prints the median of
TTFT case ÷ base and of TPOT case ÷ base over all pairs and over each span of arrival times
(--spans, seconds, edges; default 0,6,12,18,30), and the case's three slowest requests beside
the base's time for the same request.

Why: a window of 25-30 s at 2.5 requests/s has 60-75 requests, so a TTFT p99 is close to the
slowest one and moves by tens of per cent between runs of the same setting; the median of the
paired ratios says whether every request got slower, and the spans say when (a training's
arrival, start-up or first allocations, in the no-room case).

--pool: several rounds, each a base run and a case run of one seed (the same arrivals within a
round, other arrivals in the next). All rounds' requests are pooled: the TTFT p99 (nearest rank,
as llm_service.py) of the bases and of the cases, over every request and over those arriving
at or after --after seconds (default 6: the training's arrival in the no-room case), their
ratio, the paired medians over the pool, and a 90 % interval of the ratio of p99s from a
bootstrap that resamples the pairs (2,000 resamples, seeded: the same input prints the same
interval). Five rounds of ~55 requests put the p99 near the third-slowest request of ~275
rather than at the slowest of 55; the interval says whether the pool resolves a bound. With
three rounds or more it also prints loo_lo/loo_hi, the lowest and highest after-arrival ratio
of the pool with one round left out in turn: a ratio that one round's slowest requests decide
(a base run with a tail of its own, say) moves there, which the bootstrap of pairs does not
show.
Exit 0; 2 on unreadable input or an odd number of files."""
import argparse
import random
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


def nearest_rank(values, percent):
    """The nearest-rank percentile of values (percent an integer, 1..100); nan for none."""
    v = sorted(values)
    if not v:
        return float("nan")
    rank = -(-percent * len(v) // 100)
    return v[min(max(rank, 1), len(v)) - 1]


def pooled(rounds, after_s, resamples=2000):
    """rounds: [(base rows, case rows)]. Returns a dict of the pooled statistics (see --pool):
    n, n_after, base/case TTFT p99 over all and after after_s, their ratios, the paired medians
    (TPOT's also over the requests arriving before and after after_s) and ratio_lo/ratio_hi,
    the 5th and 95th percentiles of the after-arrival p99 ratio over bootstrap resamples of the
    after-arrival pairs."""
    def after_pairs(some):
        return [(b[i], c[i]) for b, c in some for i in range(min(len(b), len(c)))
                if b[i][0] >= after_s]

    def p99_ratio(sel):
        return nearest_rank([c[1] for _, c in sel], 99) / nearest_rank([b[1] for b, _ in sel], 99)

    pairs = [(b[i], c[i]) for b, c in rounds for i in range(min(len(b), len(c)))]
    after = after_pairs(rounds)
    out = {"rounds": len(rounds), "n": len(pairs), "n_after": len(after)}
    for name, sel in (("", pairs), ("_after", after)):
        bp = nearest_rank([b[1] for b, _ in sel], 99)
        cp = nearest_rank([c[1] for _, c in sel], 99)
        out[f"base_ttft_p99{name}"], out[f"case_ttft_p99{name}"] = bp, cp
        out[f"ttft_p99_ratio{name}"] = cp / bp if sel else float("nan")
    out["ttft_ratio_median"] = statistics.median(c[1] / b[1] for b, c in pairs) if pairs else float("nan")
    before = [(b, c) for b, c in pairs if b[0] < after_s]
    for name, sel in (("", pairs), ("_before", before), ("_after", after)):
        out[f"tpot_ratio_median{name}"] = (statistics.median(c[2] / b[2] for b, c in sel)
                                           if sel else float("nan"))
    ratios = []
    rng = random.Random(1)
    for _ in range(resamples if after else 0):
        ratios.append(p99_ratio([after[rng.randrange(len(after))] for _ in after]))
    ratios.sort()
    out["ratio_lo"] = ratios[len(ratios) * 5 // 100] if ratios else float("nan")
    out["ratio_hi"] = ratios[len(ratios) * 95 // 100] if ratios else float("nan")
    if len(rounds) >= 3:
        loo = [p99_ratio(rest) for rest in (after_pairs(rounds[:k] + rounds[k + 1:])
                                            for k in range(len(rounds))) if rest]
        out["loo_lo"], out["loo_hi"] = min(loo), max(loo)
    return out


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
    # Pooled: two rounds of 100 requests, the case 1.5 x slower from 6 s on in both; nearest rank
    # over 200 puts the p99 at the second-slowest request.
    r1 = [(i * 0.1, 10.0 + i % 7, 5.0) for i in range(100)]  # arrivals 0 .. 9.9 s
    r2 = [(i * 0.1, 12.0 - i % 5, 5.0) for i in range(100)]
    slow = lambda rows: [(a, t * (1.5 if a >= 6 else 1.0), p) for a, t, p in rows]
    out = pooled([(r1, slow(r1)), (r2, slow(r2))], 6.0, resamples=200)
    assert (out["rounds"], out["n"], out["n_after"]) == (2, 200, 80), out
    assert out["base_ttft_p99"] == 16.0 and out["ttft_p99_ratio_after"] == 1.5, out
    assert out["ratio_lo"] == 1.5 == out["ratio_hi"], out  # every resample: exactly 1.5 x
    assert out["ttft_ratio_median"] == 1.0, out  # 120 of 200 pairs before 6 s, unchanged
    r3 = [(a, t, p * (1.0 if a < 6 else 1.2)) for a, t, p in slow(r1)]  # TPOT 1.2 x from 6 s
    out = pooled([(r1, r3)], 6.0, resamples=0)
    assert (out["tpot_ratio_median_before"], out["tpot_ratio_median_after"]) == (1.0, 1.2), out
    # Left out in turn: a third round whose base has two slow requests after 6 s sets the pooled
    # base p99; without it the pool is 1.5 x again.
    r4 = [(a, 100.0 if i in (70, 80) else t, p) for i, (a, t, p) in enumerate(r1)]
    out = pooled([(r1, slow(r1)), (r2, slow(r2)), (r4, slow(r1))], 6.0, resamples=0)
    assert out["ttft_p99_ratio_after"] < 1.5 and out["loo_lo"] < 1.5 == out["loo_hi"], out
    assert "loo_lo" not in pooled([(r1, slow(r1)), (r2, slow(r2))], 6.0, resamples=0)
    assert nearest_rank([], 99) != nearest_rank([], 99)  # nan for no values
    return 12


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base")
    ap.add_argument("cases", nargs="+")
    ap.add_argument("--spans", default="0,6,12,18,30")
    ap.add_argument("--pool", action="store_true")
    ap.add_argument("--after", type=float, default=6.0)
    args = ap.parse_args()
    if args.pool:
        files = [args.base] + args.cases
        if len(files) % 2:
            print("llm_pairs: --pool takes BASE CASE pairs: an odd number of files",
                  file=sys.stderr)
            return 2
        try:
            rounds = [(read_detail(files[i]), read_detail(files[i + 1]))
                      for i in range(0, len(files), 2)]
        except (OSError, ValueError) as e:
            print(f"llm_pairs: {e}", file=sys.stderr)
            return 2
        out = pooled(rounds, args.after)
        print("pooled " + " ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}"
                                   for k, v in out.items()) + f" after_s={args.after:g}")
        return 0
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
