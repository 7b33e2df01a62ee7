#!/usr/bin/env python3
"""What one kernel costs more as an MPS client: a chain of small decode-like kernels, or one decode
step of llm_service.py's model, replayed as one CUDA graph and launched one by one, timed per
pass. test/bench/mps_floor.sh runs it bare and as an MPS client in one call, so that the ratio
separates a cost per kernel (it grows with --kernels) from a cost per launch call (the eager
loop has --kernels calls, the graph one), and the decode step's own kernels from a chain's.

    python3 test/bench/mps_floor.py --kernels 400 --replays 300 --hidden 2048
    python3 test/bench/mps_floor.py --decode 8 --replays 200 --profile

Chain (default): --kernels // 2 pairs of (x @ W, x + bias) on a [--batch, --hidden] bf16
activation with a [--hidden, --hidden] bf16 weight per pair drawn from a generator seeded 0 (a
decode step's GEMV and its elementwise tail; at --hidden 8192 each weight is 128 MiB, so the
kernels are bound by memory bandwidth as a 7B model's decode is), then one argmax kernel per row.
--decode B: one decode step of B lanes of llm_service.py's Llama-7B-shaped model (its defaults:
32 layers of 4,096, ~12.5 GiB of weights) with a KV pool of B slots of 512 tokens, at position
192 (a request half-way through its tokens), as that service replays it.
The graph is captured once on a side stream after a warm-up, as torch.cuda.graph asks. Each
replay (and each eager pass) is followed by torch.cuda.synchronize(); the `io` replay instead
copies the input in from pinned host memory (non_blocking) before it and reads the argmax back
with .tolist() after it, as llm_service.py's decode step does with its tokens.

Prints one JSON line:
  {"kind": "mps_floor", "shape": "chain" | "decode", "kernels": n (per graph replay, from the
   profile when --profile, else the chain's count or 0), "hidden": h, "batch": b,
   "graph_ms_p50", "graph_ms_p99", "io_ms_p50", "io_ms_p99", "eager_ms_p50", "eager_ms_p99",
   "graph_us_per_kernel", "eager_us_per_kernel" (0 when kernels is 0), "mps":
   "<CUDA_MPS_PIPE_DIRECTORY or empty>"}
(wall-clock ms per pass over --replays after 20 unmeasured ones; p99 nearest-rank); with
--profile, before it, one line per kernel name of 20 profiled graph replays (torch.profiler, CUDA
activity), the most GPU time first:
  {"kind": "kernel", "name": <first 120 characters>, "us_per_replay", "count_per_replay"}

    python3 test/bench/mps_floor.py --compare BARE.out CLIENT.out [TOP]

reads two such outputs of --profile (no GPU needed) and prints, for the TOP (default 12) kernel
names whose GPU time per replay grew the most, `kernel=<name> us_a=.. us_b=.. delta_us=..
ratio=..`, then `total us_a=.. us_b=.. delta_us=.. ratio=..` over every kernel.
Exit 0; 2 on bad options or an output without kernel lines.
"""
import argparse
import json
import os
import statistics
import time
from types import SimpleNamespace

from prio_service import nearest_rank  # this folder's: the benches' one percentile


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


def chain_pass(torch, args):
    """(step, input tensor, pinned host copy of its first row) for the kernel chain."""
    g = torch.Generator(device="cuda").manual_seed(0)
    pairs = args.kernels // 2
    ws = [torch.randn(args.hidden, args.hidden, device="cuda", dtype=torch.bfloat16, generator=g)
          * 0.02 for _ in range(pairs)]
    bs = [torch.randn(args.hidden, device="cuda", dtype=torch.bfloat16, generator=g)
          for _ in range(pairs)]
    x0 = torch.randn(args.batch, args.hidden, device="cuda", dtype=torch.bfloat16, generator=g)

    def step():
        x = x0
        for w, b in zip(ws, bs):
            x = x @ w + b
        return x.argmax(-1)
    return step, x0[0], torch.randn(args.hidden, dtype=torch.bfloat16).pin_memory()


def decode_pass(torch, args):
    """(step, token input, pinned host tokens) for one decode step of --decode lanes."""
    from llm_service import Model  # this folder's: the served model, its shapes and kernels

    b = args.decode
    shape = SimpleNamespace(layers=32, hidden=4096, heads=32, kv_heads=8, ffn=11008,
                            max_len=512)
    torch.manual_seed(0)
    model = Model(torch, shape)
    model.make_pool(b)
    tok = torch.randint(0, 32000, (b,), device="cuda")
    pos = torch.full((b,), 192, dtype=torch.int64, device="cuda")

    def step():
        return model.step(tok, pos, b)
    return step, tok, torch.randint(0, 32000, (b,)).pin_memory()


def kernel_table(torch, replay, replays=20):
    """Per kernel name: GPU µs and launches per replay over `replays` profiled replays, the most
    GPU time first. CUPTI reports each kernel of a replayed graph as its own activity."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(replays):
            replay()
        torch.cuda.synchronize()
    rows = []
    for avg in prof.key_averages():
        if avg.device_type != torch.autograd.DeviceType.CUDA:
            continue
        # self_device_time_total since PyTorch 2.4, self_cuda_time_total before (µs).
        us = getattr(avg, "self_device_time_total", None)
        if us is None:
            us = avg.self_cuda_time_total
        if us > 0:
            rows.append((avg.key, us / replays, avg.count / replays))
    return sorted(rows, key=lambda r: -r[1])


def kernel_lines(path):
    """{name: us_per_replay} from the kernel lines of an output of --profile."""
    out = {}
    with open(path) as f:
        for line in f:
            if line.startswith('{"kind": "kernel"'):
                d = json.loads(line)
                out[d["name"]] = out.get(d["name"], 0.0) + d["us_per_replay"]
    return out


def compare(path_a, path_b, top=12):
    """Lines naming the kernels whose GPU time per replay grew the most from a to b, then the
    total; None when either file has no kernel lines."""
    a, b = kernel_lines(path_a), kernel_lines(path_b)
    if not a or not b:
        return None

    def row(label, x, y):
        ratio = f"{y / x:.3f}" if x > 0 else "-"
        return f"{label} us_a={x:.2f} us_b={y:.2f} delta_us={y - x:.2f} ratio={ratio}"
    names = sorted(set(a) | set(b), key=lambda n: -(b.get(n, 0.0) - a.get(n, 0.0)))
    lines = [row(f"kernel={n}", a.get(n, 0.0), b.get(n, 0.0)) for n in names[:top]]
    lines.append(row("total", sum(a.values()), sum(b.values())))
    return lines


def selftest():
    """Checks compare() on two made-up profiles; returns the count (run by benchlib.py selftest)."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        a, b, empty = (os.path.join(d, n) for n in ("a", "b", "empty"))
        k = '{{"kind": "kernel", "name": "{}", "us_per_replay": {}, "count_per_replay": 1}}\n'
        with open(a, "w") as f:
            f.write(k.format("gemv", 100.0) + k.format("attn", 50.0) + '{"kind": "mps_floor"}\n')
        with open(b, "w") as f:
            f.write(k.format("gemv", 101.0) + k.format("attn", 70.0) + k.format("new", 3.0))
        open(empty, "w").close()
        lines = compare(a, b)
        assert lines[0] == "kernel=attn us_a=50.00 us_b=70.00 delta_us=20.00 ratio=1.400", lines
        assert lines[1].startswith("kernel=new us_a=0.00 us_b=3.00") and lines[1].endswith("ratio=-")
        assert lines[-1] == "total us_a=150.00 us_b=174.00 delta_us=24.00 ratio=1.160", lines
        assert compare(a, b, top=1)[1].startswith("total"), "top bounds the kernel lines"
        assert compare(a, empty) is None, "a file without kernel lines"
    return 1


def main():
    import sys
    if len(sys.argv) > 1 and sys.argv[1] == "--compare":
        if len(sys.argv) not in (4, 5) or (len(sys.argv) == 5 and not sys.argv[4].isdigit()):
            print("usage: mps_floor.py --compare A.out B.out [TOP]", file=sys.stderr)
            return 2
        lines = compare(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) == 5 else 12)
        if lines is None:
            print("mps_floor: no kernel lines (run with --profile)", file=sys.stderr)
            return 2
        print("\n".join(lines))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", type=int, default=400, help="chain kernels per pass (default 400)")
    ap.add_argument("--replays", type=int, default=300, help="timed passes (default 300)")
    ap.add_argument("--hidden", type=int, default=2048, help="chain GEMV width (default 2048)")
    ap.add_argument("--batch", type=int, default=8, help="chain activation rows (default 8)")
    ap.add_argument("--decode", type=int, default=0,
                    help="lanes of one LLM decode step instead of the chain (default 0: chain)")
    ap.add_argument("--profile", action="store_true",
                    help="print the graph's kernels and their GPU time per replay")
    args = ap.parse_args()
    if args.kernels < 2 or args.replays < 1 or args.hidden < 1 or args.batch < 1 or args.decode < 0:
        ap.error("--kernels must be >= 2, --replays, --hidden, --batch >= 1, --decode >= 0")

    import torch

    with torch.inference_mode():
        step, x_in, host_in = (decode_pass if args.decode else chain_pass)(torch, args)
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
            x_in.copy_(host_in, non_blocking=True)
            graph.replay()
            out.tolist()

        eager = timed(step, args.replays, torch)
        graphed = timed(graph.replay, args.replays, torch)
        io = timed(replay_io, args.replays, torch)
        kernels = 0 if args.decode else 2 * (args.kernels // 2) + 1
        if args.profile:
            table = kernel_table(torch, graph.replay)
            for name, us, n in table:
                print(json.dumps({"kind": "kernel", "name": name[:120], "us_per_replay": round(us, 2),
                                  "count_per_replay": round(n, 2)}), flush=True)
            kernels = round(sum(n for _, _, n in table))

    def per_kernel(ms):
        return round(ms * 1000.0 / kernels, 3) if kernels else 0

    print(json.dumps({
        "kind": "mps_floor", "shape": "decode" if args.decode else "chain", "kernels": kernels,
        "hidden": 4096 if args.decode else args.hidden,
        "batch": args.decode or args.batch,
        "graph_ms_p50": round(statistics.median(graphed), 4),
        "graph_ms_p99": round(nearest_rank(sorted(graphed), 99), 4),
        "io_ms_p50": round(statistics.median(io), 4),
        "io_ms_p99": round(nearest_rank(sorted(io), 99), 4),
        "eager_ms_p50": round(statistics.median(eager), 4),
        "eager_ms_p99": round(nearest_rank(sorted(eager), 99), 4),
        "graph_us_per_kernel": per_kernel(statistics.median(graphed)),
        "eager_us_per_kernel": per_kernel(statistics.median(eager)),
        "mps": os.environ.get("CUDA_MPS_PIPE_DIRECTORY", ""),
    }), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
