#!/usr/bin/env python3
"""Sleep and wake as serving engines do it (vLLM's sleep mode, SGLang's memory saver), from
PyTorch and the driver API alone: the model's weights and its KV cache are allocated through
test/gpu/cumem_pool's allocator (libgs_cumem_pool.so, loaded as PyTorch's pluggable allocator
into a torch.cuda.MemPool), so every segment is a cuMemCreate handle mapped at an address
reserved for it. Decode steps are captured as CUDA graphs over those addresses.

  sleep = synchronize, copy the weights to pinned host memory, cuMemUnmap + cuMemRelease every
          handle (weights and KV cache; the addresses stay reserved)
  wake  = cuMemCreate + cuMemMap + cuMemSetAccess at the same addresses, copy the weights back,
          refill the KV cache (a seeded prefill), replay the graphs

    python3 test/gpu/sleep_wake.py --lib build/test/libgs_cumem_pool.so --cycles 50

Each cycle's graph outputs (every batch size) must equal the first run's bit for bit. Model
(random weights, torch.manual_seed(0), bf16): --layers layers of --hidden with an --ffn MLP and
one attention read over the layer's KV slice (--ctx tokens), logits over 32,000 tokens.

Output: one JSON line {"kind": "sleep_wake", "cycles", "mismatches", "weights_gib", "kv_gib",
"freed_gib_min" (free memory asleep minus awake, smallest over cycles), "sleep_ms_p50",
"sleep_ms_max", "wake_ms_p50", "wake_ms_max" (wake includes the KV refill), "graph_sizes",
"digest" (sha256 of the first outputs)}; progress on stderr.
Exit: 0 all cycles identical; 1 a mismatch or an allocator error; 2 usage errors.
"""
import argparse
import ctypes
import hashlib
import json
import statistics
import sys
import time

VOCAB = 32000
GIB = 1 << 30


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True, help="path of libgs_cumem_pool.so")
    ap.add_argument("--cycles", type=int, default=50)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--ffn", type=int, default=11008)
    ap.add_argument("--ctx", type=int, default=4096, help="KV tokens each layer reads")
    ap.add_argument("--kv-gib", type=float, default=6.0, help="KV cache size")
    ap.add_argument("--graph-sizes", default="1,8,32")
    ap.add_argument("--hold-ms", type=float, default=0.0, help="time asleep each cycle")
    args = ap.parse_args()
    if args.cycles < 1 or args.layers < 1 or args.kv_gib <= 0:
        ap.error("--cycles, --layers and --kv-gib must be positive")
    sizes = [int(s) for s in args.graph_sizes.split(",")]

    import torch

    lib = ctypes.CDLL(args.lib)  # the same handle PyTorch's dlopen gets: one allocation table
    lib.gs_cumem_error.restype = ctypes.c_char_p
    lib.gs_cumem_bytes.restype = ctypes.c_ulonglong
    lib.gs_cumem_bytes.argtypes = [ctypes.c_uint, ctypes.c_int]
    alloc = torch.cuda.memory.CUDAPluggableAllocator(args.lib, "gs_cumem_alloc", "gs_cumem_free")
    pool = torch.cuda.MemPool(alloc.allocator())
    dev = torch.device("cuda", 0)
    torch.manual_seed(0)
    h, dt = args.hidden, torch.bfloat16

    lib.gs_cumem_set_tag(0)  # weights: offloaded at sleep
    with torch.cuda.use_mem_pool(pool):
        layers = []
        for _ in range(args.layers):
            layers.append((torch.randn(h, args.ffn, device=dev, dtype=dt) / 64,
                           torch.randn(args.ffn, h, device=dev, dtype=dt) / 64))
        w_out = torch.randn(h, VOCAB, device=dev, dtype=dt) / 64
    lib.gs_cumem_set_tag(1)  # KV cache: discarded at sleep, refilled after wake
    per_layer = int(args.kv_gib * GIB) // (args.layers * h * 2)
    if per_layer < args.ctx:
        ap.error("--kv-gib too small for --ctx tokens in every layer")
    with torch.cuda.use_mem_pool(pool):
        kv = torch.empty(args.layers, per_layer, h, device=dev, dtype=dt)
    weights_bytes = lib.gs_cumem_bytes(1, 1)
    kv_bytes = lib.gs_cumem_bytes(2, 1)

    def prefill():
        g = torch.Generator(device=dev)
        g.manual_seed(1)
        kv.normal_(generator=g)

    def step(x):
        for li, (w1, w2) in enumerate(layers):
            k = kv[li, :args.ctx]
            att = torch.softmax((x @ k.T) / 64.0, dim=-1) @ k
            x = x + att
            x = x + torch.nn.functional.silu(x @ w1) @ w2
        return x @ w_out

    prefill()
    graphs, inputs, outputs = {}, {}, {}
    stream = torch.cuda.Stream()
    for b in sizes:
        inputs[b] = torch.randn(b, h, device=dev, dtype=dt, generator=torch.Generator(
            device=dev).manual_seed(100 + b))
        with torch.cuda.stream(stream):
            step(inputs[b])  # warm-up outside capture (cuBLAS handles, workspaces)
        torch.cuda.current_stream().wait_stream(stream)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            outputs[b] = step(inputs[b])
        graphs[b] = g

    def run_all():
        for b in sizes:
            graphs[b].replay()
        torch.cuda.synchronize()
        return {b: outputs[b].float().cpu() for b in sizes}

    ref = run_all()
    digest = hashlib.sha256(b"".join(ref[b].numpy().tobytes() for b in sizes)).hexdigest()
    sleep_ms, wake_ms, freed = [], [], []
    mismatches = 0
    for cycle in range(args.cycles):
        free_awake = torch.cuda.mem_get_info(0)[0]
        t0 = time.perf_counter()
        rc = lib.gs_cumem_sleep(1)
        t1 = time.perf_counter()
        if rc != 0:
            print("sleep_wake: sleep in cycle %d: %s" % (cycle, lib.gs_cumem_error().decode()),
                  file=sys.stderr)
            return 1
        freed.append(torch.cuda.mem_get_info(0)[0] - free_awake)
        if args.hold_ms > 0:
            time.sleep(args.hold_ms / 1000.0)
        t2 = time.perf_counter()
        rc = lib.gs_cumem_wake()
        if rc != 0:
            print("sleep_wake: wake in cycle %d: %s" % (cycle, lib.gs_cumem_error().decode()),
                  file=sys.stderr)
            return 1
        prefill()
        torch.cuda.synchronize()
        t3 = time.perf_counter()
        sleep_ms.append((t1 - t0) * 1e3)
        wake_ms.append((t3 - t2) * 1e3)
        got = run_all()
        bad = [b for b in sizes if not torch.equal(got[b], ref[b])]
        if bad:
            mismatches += 1
            print("sleep_wake: cycle %d: outputs differ for batch %s" % (cycle, bad),
                  file=sys.stderr)
        if cycle % 10 == 0:
            print("sleep_wake: cycle %d sleep %.0f ms wake %.0f ms freed %.2f GiB" % (
                cycle, sleep_ms[-1], wake_ms[-1], freed[-1] / GIB), file=sys.stderr)
    print(json.dumps({
        "kind": "sleep_wake", "cycles": args.cycles, "mismatches": mismatches,
        "weights_gib": round(weights_bytes / GIB, 3), "kv_gib": round(kv_bytes / GIB, 3),
        "freed_gib_min": round(min(freed) / GIB, 3),
        "sleep_ms_p50": round(statistics.median(sleep_ms), 1), "sleep_ms_max": round(max(sleep_ms), 1),
        "wake_ms_p50": round(statistics.median(wake_ms), 1), "wake_ms_max": round(max(wake_ms), 1),
        "graph_sizes": sizes, "digest": digest}), flush=True)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
