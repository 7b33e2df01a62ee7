#!/usr/bin/env python3
"""Latency statistics of prio_service.py runs, whole and with the machine's stalls set aside.

    python3 test/bench/prio_stats.py DIR [DIR...]      (each DIR holds a latencies.txt)

Prints per DIR: nearest-rank p50/p90/p99 of every request, then the same over the requests
left when every request within [i - 2, i + 8) of a request i slower than --stall-ms (default
30) is set aside, the number set aside, and the service's busy fraction (service.out).

Why the second set: on some GPU machines the service alone, without gshare or any other job,
stalls for 30-110 ms every 1-2 s (a stalled request delays the ones queued behind it), which
decides p99 by itself. The same rule is applied to every case alike; it also removes stalls
that a co-running job would cause, so the whole-window numbers are printed beside it.

With a detail.txt (prio_service.py --detail-out) it also prints, over the requests whose own
wall time (not their queueing) exceeds --stall-ms, their number and the medians of their wall,
CPU and GPU ms: CPU far below wall means the thread waited for a CPU (descheduled), GPU near
wall that it waited for the GPU."""
import argparse
import json
import os

from prio_service import nearest_rank  # this folder's


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--stall-ms", type=float, default=30.0)
    args = ap.parse_args()
    for d in args.dirs:
        with open(os.path.join(d, "latencies.txt")) as f:
            lat = [float(x) for x in f if x.strip()]
        aside = set()
        for i, x in enumerate(lat):
            if x > args.stall_ms:
                aside.update(range(i - 2, i + 8))
        kept = sorted(x for i, x in enumerate(lat) if i not in aside)
        whole = sorted(lat)
        busy = "-"
        try:
            with open(os.path.join(d, "service.out")) as f:
                for line in f:
                    if line.startswith("{"):
                        busy = "%.3f" % json.loads(line)["busy_fraction"]
        except (OSError, ValueError, KeyError):
            pass
        slow = ""
        try:
            with open(os.path.join(d, "detail.txt")) as f:
                rows = [[float(v) for v in line.split()] for line in f if line.strip()]
            own = [r for r in rows if r[1] > args.stall_ms]
            med = lambda k: nearest_rank(sorted(r[k] for r in own), 50)  # noqa: E731
            slow = " | slow=%d wall=%.2f cpu=%.2f gpu=%.2f" % (len(own), med(1), med(2), med(3))
        except (OSError, ValueError, IndexError):
            pass
        print("%s all p50=%.2f p90=%.2f p99=%.2f | kept=%d p50=%.2f p90=%.2f p99=%.2f | "
              "aside=%d busy=%s%s" % (
                  d, nearest_rank(whole, 50), nearest_rank(whole, 90), nearest_rank(whole, 99),
                  len(kept), nearest_rank(kept, 50), nearest_rank(kept, 90),
                  nearest_rank(kept, 99), len(lat) - len(kept), busy, slow))


if __name__ == "__main__":
    main()
