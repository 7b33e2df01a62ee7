#!/usr/bin/env python3
"""What one kernel costs more as an MPS client: a chain of small decode-like kernels, replayed as
one CUDA graph and launched one by one, timed per replay. test/bench/mps_floor.sh runs it bare
and as an MPS client in one call, so that the ratio separates a cost per kernel (it grows with
--kernels) from a cost per launch call (the eager loop has --kernels calls, the graph one).

    python3 test/bench/mps_floor.py --kernels 400 --replays 300 --hidden 2048

Work: --kernels // 2 pairs of (x @ W, x + bias) on a [--batch, --hidden] bf16 activation with a
[--hidden, --hidden] bf16 weight per pair drawn from a generator seeded 0 (a decode step's GEMV
and its elementwise tail; at --hidden 8192 each weight is 128 MiB, so the kernels are bound by
memory bandwidth as a 7B model's decode is), then one argmax kernel per row. The graph is
captured once on a side stream after a warm-up, as torch.cuda.graph asks. Each replay (and each
eager pass) is followed by torch.cuda.synchronize(); the `io` replay instead copies the first
activation row in from pinned host memory (non_blocking) before it and reads the argmax back
with .tolist() after it, as llm_service.py's decode step does with its tokens.

Prints one JSON line:
  {"kind": "mps_floor", "kernels": n, "hidden": h, "graph_ms_p50", "graph_ms_p99",
   "io_ms_p50", "io_ms_p99", "eager_ms_p50", "eager_ms_p99", "graph_us_per_kernel",
   "eager_us_per_kernel", "mps": "<CUDA_MPS_PIPE_DIRECTORY or empty>"}
(wall-clock ms per pass over --replays after 20 unmeasured ones). Exit 0; 2 on bad options.
"""
import argparse
import json
import os
import statistics
import time


def pct(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def timed(run, replays, torch):
    """ms per call of run() followed by a synchronize, over replays after 20 warm-up calls."""
    for _ in range(20):
        run()
    torch.cuda.synchronize()
    out = []
    for _ in range(replays):
        t0 = time.perf_counter()
        run()
        torch.cuda.synchronize()
        out.append((time.perf_counter() - t0) * 1000.0)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", type=int, default=400, help="kernels per pass (default 400)")
    ap.add_argument("--replays", type=int, default=300, help="timed passes (default 300)")
    ap.add_argument("--hidden", type=int, default=2048, help="GEMV width (default 2048)")
    ap.add_argument("--batch", type=int, default=8, help="activation rows (default 8)")
    args = ap.parse_args()
    if args.kernels < 2 or args.replays < 1 or args.hidden < 1 or args.batch < 1:
        ap.error("--kernels must be >= 2 and --replays, --hidden, --batch >= 1")

    import torch

    g = torch.Generator(device="cuda").manual_seed(0)
    pairs = args.kernels // 2
    ws = [torch.randn(args.hidden, args.hidden, device="cuda", dtype=torch.bfloat16, generator=g)
          * 0.02 for _ in range(pairs)]
    bs = [torch.randn(args.hidden, device="cuda", dtype=torch.bfloat16, generator=g)
          for _ in range(pairs)]
    x0 = torch.randn(args.batch, args.hidden, device="cuda", dtype=torch.bfloat16, generator=g)

    host_row = torch.randn(args.hidden, dtype=torch.bfloat16).pin_memory()

    def step():
        x = x0
        for w, b in zip(ws, bs):
            x = x @ w + b
        return x.argmax(-1)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = step()
    torch.cuda.synchronize()

    def replay_io():
        x0[0].copy_(host_row, non_blocking=True)
        graph.replay()
        out.tolist()

    eager = timed(step, args.replays, torch)
    graphed = timed(graph.replay, args.replays, torch)
    io = timed(replay_io, args.replays, torch)
    kernels = 2 * pairs + 1
    print(json.dumps({
        "kind": "mps_floor", "kernels": kernels, "hidden": args.hidden,
        "graph_ms_p50": round(statistics.median(graphed), 4),
        "graph_ms_p99": round(pct(graphed, 0.99), 4),
        "io_ms_p50": round(statistics.median(io), 4),
        "io_ms_p99": round(pct(io, 0.99), 4),
        "eager_ms_p50": round(statistics.median(eager), 4),
        "eager_ms_p99": round(pct(eager, 0.99), 4),
        "graph_us_per_kernel": round(statistics.median(graphed) * 1000.0 / kernels, 3),
        "eager_us_per_kernel": round(statistics.median(eager) * 1000.0 / kernels, 3),
        "mps": os.environ.get("CUDA_MPS_PIPE_DIRECTORY", ""),
    }), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
