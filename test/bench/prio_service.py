#!/usr/bin/env python3
"""A latency-critical inference service: ResNet-50 requests arriving open loop at a fixed period.

The high-priority job of test/bench/priority.sh, run alone, beside bare trainings, or under
`gshare run -p 10` beside `gshare run -p 0` trainings.

    python3 test/bench/prio_service.py                          # 20 s, one request every 12 ms
    python3 test/bench/prio_service.py --seconds 5 --out lat.txt

Model: timm's resnet50 with random weights (torch.manual_seed(0)), fp16, eval mode; one input
batch of --batch (default 8) x 3 x 224 x 224 fp16 made once on the GPU; every forward pass under
torch.inference_mode(). Python's garbage collector is frozen after the warm-up and off during
the window (gc.freeze, gc.disable), as latency-critical Python services run.

Load: --warmup requests back to back (each synchronized), then request i arrives at
t0 + i * --period-ms for i * period < --seconds. Requests are served in order: one that has
arrived by the time the previous completes starts at once (it queued), else the server waits
for its arrival (a sleep, then a spin over the last 0.3 ms). A request is its forward pass and
torch.cuda.synchronize(); its latency is completion - arrival, so queueing behind a slow request
counts, as a client would see it.

Output (stdout, each line flushed): `window_start <time.time()>` just before the first arrival,
`window_end <time.time()>` after the last completion, then one JSON line
  {"kind": "service", "requests": n, "p50_ms", "p90_ms", "p99_ms", "mean_ms", "max_ms",
   "busy_fraction", "window_start", "window_end"}
Percentiles are nearest-rank (sorted latencies, index ceil(p * n) - 1). busy_fraction is the
sum of the requests' compute times (start of service to completion) over the window
(first arrival to last completion). --out PATH: every latency in ms, one per line, in arrival
order. --detail-out PATH: per request, tab-separated: latency, the request's own wall time
(start of service to completion), this thread's CPU time over it (time.thread_time: it stops
while the thread is descheduled; the synchronize spins, so waiting on the GPU counts) and the
GPU's time from an event recorded before the forward pass to one after it (ms each): a slow
request whose CPU time is far below its wall time waited for a CPU, one whose GPU time is its
wall time waited for the GPU. Progress goes to stderr.

Memory that comes free while the service runs (a service that gives back most of what it held,
as a trainer beside it would see it): --ballast-fraction F allocates F of the GPU's free memory
(torch.cuda.mem_get_info after the warm-up: under gshare, the shim's view) in one buffer before
the window, never touched; --ballast-free-at S frees it (del, torch.cuda.empty_cache()) just
before serving the first request that arrives S or more seconds into the window, and prints
`ballast_freed <time.time()>` after the free (that request's latency includes the free).
"""
import argparse
import gc
import json
import sys
import time

SPIN_S = 0.0003  # the last part of a wait is spent spinning: sleep() overshoots by ~0.1 ms


def nearest_rank(sorted_values, percent):
    """The nearest-rank percentile of sorted_values (percent an integer, 1..100); nan for none."""
    n = len(sorted_values)
    if n == 0:
        return float("nan")
    rank = -(-percent * n // 100)  # ceil(percent * n / 100) in integers: no rounding error
    return sorted_values[min(max(rank, 1), n) - 1]


def wait_until(deadline):
    """Returns at perf_counter() >= deadline: a sleep, then a spin over the last SPIN_S."""
    rest = deadline - time.perf_counter()
    if rest > SPIN_S:
        time.sleep(rest - SPIN_S)
    while time.perf_counter() < deadline:
        pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="open-loop window (default 20)")
    ap.add_argument("--period-ms", type=float, default=12.0,
                    help="time between arrivals in ms (default 12)")
    ap.add_argument("--warmup", type=int, default=50, help="back-to-back requests first (default 50)")
    ap.add_argument("--batch", type=int, default=8, help="images per request (default 8)")
    ap.add_argument("--out", default="", help="file for the per-request latencies (ms)")
    ap.add_argument("--detail-out", default="",
                    help="file for each request's latency, wall, CPU and GPU ms")
    ap.add_argument("--ballast-fraction", type=float, default=0.0,
                    help="hold this fraction of the free GPU memory (default 0: none)")
    ap.add_argument("--ballast-free-at", type=float, default=-1.0,
                    help="free the ballast this many s into the window (default: never)")
    args = ap.parse_args()
    if args.seconds <= 0 or args.period_ms <= 0 or args.warmup < 0 or args.batch < 1:
        ap.error("--seconds and --period-ms must be > 0, --warmup >= 0, --batch >= 1")
    if not 0.0 <= args.ballast_fraction < 1.0:
        ap.error("--ballast-fraction must be in [0, 1)")

    import torch
    import timm

    torch.manual_seed(0)
    model = timm.create_model("resnet50", pretrained=False).cuda().half().eval()
    x = torch.randn(args.batch, 3, 224, 224, device="cuda", dtype=torch.half)

    period = args.period_ms / 1000.0
    n = 0
    while n * period < args.seconds:
        n += 1
    latency = [0.0] * n
    wall = [0.0] * n
    cpu = [0.0] * n
    detail = bool(args.detail_out)
    events = ([(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
               for _ in range(n)] if detail else [])
    busy = 0.0
    with torch.inference_mode():
        t = time.perf_counter()
        for _ in range(args.warmup):
            model(x)
            torch.cuda.synchronize()
        print(f"prio_service: {args.warmup} warm-up requests in {time.perf_counter() - t:.2f} s",
              file=sys.stderr, flush=True)
        ballast = None
        if args.ballast_fraction > 0:
            free = torch.cuda.mem_get_info()[0]
            ballast = torch.empty(int(free * args.ballast_fraction), dtype=torch.uint8,
                                  device="cuda")
            print(f"prio_service: ballast of {ballast.numel() >> 20} MiB", file=sys.stderr,
                  flush=True)
        free_at = args.ballast_free_at if ballast is not None and args.ballast_free_at >= 0 else None
        gc.collect()
        gc.freeze()
        gc.disable()

        wall_start = time.time()
        t0 = time.perf_counter()
        print(f"window_start {wall_start:.6f}", flush=True)
        for i in range(n):
            arrival = t0 + i * period
            if time.perf_counter() < arrival:
                wait_until(arrival)
            if free_at is not None and arrival - t0 >= free_at:
                del ballast
                torch.cuda.empty_cache()
                free_at = None
                print(f"ballast_freed {time.time():.6f}", flush=True)
            start = time.perf_counter()
            cpu_start = time.thread_time()
            if detail:
                events[i][0].record()
            model(x)
            if detail:
                events[i][1].record()
            torch.cuda.synchronize()
            done = time.perf_counter()
            cpu[i] = (time.thread_time() - cpu_start) * 1000.0
            busy += done - start
            wall[i] = (done - start) * 1000.0
            latency[i] = (done - arrival) * 1000.0
        t_end = time.perf_counter()
        wall_end = time.time()
        print(f"window_end {wall_end:.6f}", flush=True)

    if args.out:
        with open(args.out, "w") as f:
            f.writelines(f"{v:.4f}\n" for v in latency)
    if detail:
        with open(args.detail_out, "w") as f:
            for i in range(n):
                gpu_ms = events[i][0].elapsed_time(events[i][1])
                f.write(f"{latency[i]:.4f}\t{wall[i]:.4f}\t{cpu[i]:.4f}\t{gpu_ms:.4f}\n")
    s = sorted(latency)
    result = {
        "kind": "service",
        "requests": n,
        "p50_ms": round(nearest_rank(s, 50), 4),
        "p90_ms": round(nearest_rank(s, 90), 4),
        "p99_ms": round(nearest_rank(s, 99), 4),
        "mean_ms": round(sum(s) / n, 4),
        "max_ms": round(s[-1], 4),
        "busy_fraction": round(busy / (t_end - t0), 4),
        "window_start": round(wall_start, 6),
        "window_end": round(wall_end, 6),
    }
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
