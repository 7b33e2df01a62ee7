#!/usr/bin/env python3
"""An LLM decode service shaped as vLLM starts and serves, built from PyTorch alone.

The latency-critical job of test/bench/priority.sh when SERVICE=llm (and of share_paths.sh,
which runs priority.sh): time to first token (TTFT) and time per output token (TPOT) of a
Llama-7B-shaped decoder beside batch trainings, bare, under MPS or under gshare.

    python3 test/bench/llm_service.py --seconds 30 --rate 4              # KV pool 50 % of the GPU
    python3 test/bench/llm_service.py --util 0.92 --seconds 30          # a pool that leaves no room

Model (random weights, torch.manual_seed(0), bf16): --layers decoder layers of hidden --hidden,
--heads query heads and --kv-heads key/value heads of 128 dims (grouped-query attention),
RMSNorm, a SwiGLU MLP of --ffn, vocabulary 32,000 with tied embeddings: 32 layers of 4096 are
~6.5 G parameters, ~12.5 GiB. No rotary embedding (it changes no memory or time shape).

Start-up, as vLLM's engine does it (vllm/worker: determine_num_available_blocks):
  1. weights are made on the GPU; free memory is read (torch.cuda.mem_get_info);
  2. a profiling forward of --max-batch prompts of --prompt tokens; free memory is read again.
     vLLM aborts when free memory rose across its profiling window (vllm#56830); here
     `free_rose` in the result says so (and --strict exits 3);
  3. the KV pool is sized as --util x total - the peak memory PyTorch reserved, in slots of
     --max-len tokens (every layer's K and V: 2 x kv_heads x 128 x 2 bytes a token a layer), one
     torch.zeros tensor per layer for K and one for V, so the whole pool is written once;
  4. decode steps are captured as CUDA graphs, one per batch size in --graph-sizes (--eager:
     not captured; the same padded batch sizes, launched kernel by kernel).

Serving: requests arrive open loop, a Poisson process of --rate per second (seeded by --seed)
for --seconds. One thread runs the engine loop: arrived requests are admitted while lanes are
free (a lane is a KV slot; the lowest free one is taken) and prefilled one by one (eager
forward of --prompt random tokens, causal attention, K and V written to the lane, first token
by argmax); then, while any request runs, one decode step of the smallest captured batch that
covers the highest busy lane is replayed; each step's tokens are read back (the step's end).
A request ends after --gen tokens and frees its lane. Every prefill and step is synchronized,
so the times below are what a client sees.
  TTFT  = first token's time - arrival (queueing behind steps and prefills counts);
  ITL   = time between a request's consecutive tokens;
  TPOT  = (last token - first token) / (gen - 1), per request (vLLM's definition).

Output (stdout, each line flushed): `window_start <time.time()>` at the first arrival,
`window_end <time.time()>` after the last request ends, then one JSON line
  {"kind": "service", "shape": "llm", "requests", "p50_ms", "p90_ms", "p99_ms" (the TTFT's, so
   priority.sh reads it as any service), "ttft_p50_ms", "ttft_p99_ms", "tpot_p50_ms",
   "tpot_p99_ms", "itl_p50_ms", "itl_p99_ms", "mean_ms", "max_ms", "busy_fraction",
   "window_start", "window_end", "weights_gib", "kv_pool_gib", "slots", "free_before_gib",
   "free_after_gib", "free_rose", "total_gib", "graph_sizes"}
Percentiles are nearest-rank. busy_fraction: the time spent in prefills and steps over the
window. --out PATH: every request's TTFT in ms, one per line, in arrival order; --detail-out
PATH: per request, tab-separated: arrival offset s, TTFT ms, TPOT ms. Progress goes to stderr.
Exit: 0; 2 on usage errors; 3 with --strict when free memory rose while profiling.
"""
import argparse
import gc
import json
import random
import sys
import time

from prio_service import nearest_rank, wait_until  # this folder's: the same percentile and wait

HEAD_DIM = 128
VOCAB = 32000
GIB = float(1 << 30)


def log(msg):
    print(f"llm_service: {msg}", file=sys.stderr, flush=True)


class Model:
    """The decoder's weights and KV pool, and its prefill and decode-step forwards."""

    def __init__(self, torch, args):
        self.t = torch
        self.a = args
        h, f, d = args.hidden, args.ffn, HEAD_DIM
        kvd = args.kv_heads * d
        dev, bf = "cuda", torch.bfloat16

        def w(*shape):
            return (torch.randn(*shape, device=dev, dtype=bf) * 0.02)

        self.emb = w(VOCAB, h)
        self.layers = []
        for _ in range(args.layers):
            self.layers.append({
                "n1": torch.ones(h, device=dev, dtype=bf), "n2": torch.ones(h, device=dev, dtype=bf),
                "wq": w(h, h), "wk": w(h, kvd), "wv": w(h, kvd), "wo": w(h, h),
                "wg": w(h, f), "wu": w(h, f), "wd": w(f, h),
            })
        self.nf = torch.ones(h, device=dev, dtype=bf)
        self.kc = []
        self.vc = []

    def weights_bytes(self):
        n = self.emb.numel() + self.nf.numel()
        for layer in self.layers:
            n += sum(x.numel() for x in layer.values())
        return 2 * n

    def slot_bytes(self):
        return self.a.layers * 2 * self.a.max_len * self.a.kv_heads * HEAD_DIM * 2

    def make_pool(self, slots):
        shape = (slots, self.a.max_len, self.a.kv_heads, HEAD_DIM)
        for _ in range(self.a.layers):
            self.kc.append(self.t.zeros(shape, device="cuda", dtype=self.t.bfloat16))
            self.vc.append(self.t.zeros(shape, device="cuda", dtype=self.t.bfloat16))

    def _norm(self, x, wt):
        return self.t.nn.functional.rms_norm(x, (x.shape[-1],), wt, 1e-6)

    def _mlp(self, x, layer):
        F = self.t.nn.functional
        hx = self._norm(x, layer["n2"])
        return x + (F.silu(hx @ layer["wg"]) * (hx @ layer["wu"])) @ layer["wd"]

    def prefill(self, tokens, lane):
        """tokens: [n] int64 on the GPU; writes K and V of lane (None: profiling, no write);
        returns the first generated token (a 0-dim tensor)."""
        F = self.t.nn.functional
        a, n = self.a, tokens.shape[0]
        x = self.emb[tokens]
        for i, layer in enumerate(self.layers):
            hx = self._norm(x, layer["n1"])
            q = (hx @ layer["wq"]).view(n, a.heads, HEAD_DIM).transpose(0, 1)
            k = (hx @ layer["wk"]).view(n, a.kv_heads, HEAD_DIM)
            v = (hx @ layer["wv"]).view(n, a.kv_heads, HEAD_DIM)
            if lane is not None:
                self.kc[i][lane, :n] = k
                self.vc[i][lane, :n] = v
            o = F.scaled_dot_product_attention(q[None], k.transpose(0, 1)[None],
                                               v.transpose(0, 1)[None], is_causal=True,
                                               enable_gqa=True)
            x = x + o[0].transpose(0, 1).reshape(n, a.hidden) @ layer["wo"]
            x = self._mlp(x, layer)
        return (self._norm(x[-1], self.nf) @ self.emb.t()).argmax()

    def profile(self, batch, n):
        """The profiling forward: batch prompts of n tokens at once (activations only)."""
        F = self.t.nn.functional
        a = self.a
        x = self.emb[self.t.randint(0, VOCAB, (batch, n), device="cuda")]
        for layer in self.layers:
            hx = self._norm(x, layer["n1"])
            q = (hx @ layer["wq"]).view(batch, n, a.heads, HEAD_DIM).transpose(1, 2)
            k = (hx @ layer["wk"]).view(batch, n, a.kv_heads, HEAD_DIM).transpose(1, 2)
            v = (hx @ layer["wv"]).view(batch, n, a.kv_heads, HEAD_DIM).transpose(1, 2)
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            x = x + o.transpose(1, 2).reshape(batch, n, a.hidden) @ layer["wo"]
            x = self._mlp(x, layer)
        return (self._norm(x[:, -1], self.nf) @ self.emb.t()).argmax(-1)

    def step(self, tok, pos, b):
        """One decode step of lanes 0..b-1: tok, pos [b] int64 (the input token and its
        position); K and V written at pos; returns the next tokens [b]. Graph-capturable."""
        F = self.t.nn.functional
        a = self.a
        lanes = self.t.arange(b, device="cuda")
        mask = (self.t.arange(a.max_len, device="cuda")[None, :] <= pos[:, None]).view(b, 1, 1, a.max_len)
        x = self.emb[tok]
        for i, layer in enumerate(self.layers):
            hx = self._norm(x, layer["n1"])
            q = (hx @ layer["wq"]).view(b, a.heads, 1, HEAD_DIM)
            self.kc[i][lanes, pos] = (hx @ layer["wk"]).view(b, a.kv_heads, HEAD_DIM)
            self.vc[i][lanes, pos] = (hx @ layer["wv"]).view(b, a.kv_heads, HEAD_DIM)
            k = self.kc[i][:b].transpose(1, 2)
            v = self.vc[i][:b].transpose(1, 2)
            o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
            x = x + o.reshape(b, a.hidden) @ layer["wo"]
            x = self._mlp(x, layer)
        return (self._norm(x, self.nf) @ self.emb.t()).argmax(-1)


class Graphs:
    """One captured decode step per batch size; static inputs tok/pos of --max-batch lanes.
    eager: nothing is captured, and run() launches the step's kernels one by one, as a server
    with CUDA graphs off does (vLLM's --enforce-eager)."""

    def __init__(self, torch, model, sizes, max_batch, eager=False):
        self.t, self.model, self.eager = torch, model, eager
        self.tok = torch.zeros(max_batch, dtype=torch.int64, device="cuda")
        self.pos = torch.zeros(max_batch, dtype=torch.int64, device="cuda")
        self.sizes = sorted(sizes)
        self.graphs, self.out = {}, {}
        pool = torch.cuda.graph_pool_handle()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up off the default stream, as torch.cuda.graph asks
            for b in self.sizes:
                model.step(self.tok[:b], self.pos[:b], b)
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        # The largest first: the smaller ones reuse its pool.
        for b in ([] if eager else reversed(self.sizes)):
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, pool=pool):
                self.out[b] = model.step(self.tok[:b], self.pos[:b], b)
            self.graphs[b] = g
        torch.cuda.synchronize()

    def size_for(self, lanes):
        return next(b for b in self.sizes if b >= lanes)

    def run(self, b):
        """One decode step of b lanes from tok/pos; returns its output tensor."""
        if self.eager:
            return self.model.step(self.tok[:b], self.pos[:b], b)
        self.graphs[b].replay()
        return self.out[b]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=30.0, help="open-loop window (default 30)")
    ap.add_argument("--rate", type=float, default=4.0, help="requests per second (default 4)")
    ap.add_argument("--prompt", type=int, default=128, help="prompt tokens (default 128)")
    ap.add_argument("--gen", type=int, default=64, help="tokens generated per request (default 64)")
    ap.add_argument("--max-len", type=int, default=512, help="tokens per KV slot (default 512)")
    ap.add_argument("--max-batch", type=int, default=32, help="lanes decoded at once (default 32)")
    ap.add_argument("--graph-sizes", default="1,2,4,8,16,32", help="captured batch sizes")
    ap.add_argument("--eager", action="store_true",
                    help="decode without CUDA graphs, padded to the same batch sizes")
    ap.add_argument("--util", type=float, default=0.5,
                    help="fraction of the GPU the weights and KV pool may take (vLLM's "
                         "gpu_memory_utilization; default 0.5)")
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--kv-heads", type=int, default=8)
    ap.add_argument("--ffn", type=int, default=11008)
    ap.add_argument("--warmup", type=int, default=8, help="requests served before the window")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--strict", action="store_true", help="exit 3 when free memory rose")
    ap.add_argument("--out", default="", help="file for every request's TTFT (ms)")
    ap.add_argument("--detail-out", default="", help="file for arrival s, TTFT ms, TPOT ms")
    args = ap.parse_args()
    try:
        sizes = sorted({int(s) for s in args.graph_sizes.split(",")})
    except ValueError:
        ap.error("--graph-sizes: whole numbers separated by commas")
    if (args.seconds <= 0 or args.rate <= 0 or args.gen < 2 or args.prompt < 1
            or args.prompt + args.gen > args.max_len or not 0 < args.util < 1
            or not sizes or sizes[0] < 1 or sizes[-1] != args.max_batch
            or args.hidden != args.heads * HEAD_DIM or args.heads % args.kv_heads):
        ap.error("need --seconds, --rate > 0; --gen >= 2; --prompt + --gen <= --max-len; "
                 "0 < --util < 1; --graph-sizes ending at --max-batch; "
                 "--hidden = --heads x 128; --heads a multiple of --kv-heads")

    import torch

    torch.manual_seed(0)
    t_start = time.perf_counter()
    with torch.inference_mode():
        model = Model(torch, args)
        torch.cuda.synchronize()
        free0, total = torch.cuda.mem_get_info()
        model.profile(args.max_batch, args.prompt)
        torch.cuda.synchronize()
        free1, _ = torch.cuda.mem_get_info()
        free_rose = free1 > free0
        peak = torch.cuda.max_memory_reserved()
        pool_bytes = int(args.util * total) - peak
        slots = pool_bytes // model.slot_bytes()
        log(f"weights {model.weights_bytes() / GIB:.2f} GiB; free {free0 / GIB:.2f} -> "
            f"{free1 / GIB:.2f} GiB of {total / GIB:.2f} while profiling; peak {peak / GIB:.2f} GiB; "
            f"KV pool {slots} slots of {model.slot_bytes() / 2**20:.0f} MiB")
        if free_rose and args.strict:
            log("free memory rose while profiling (vLLM would abort)")
            sys.exit(3)
        if slots < args.max_batch:
            log(f"KV pool of {slots} slots is below --max-batch {args.max_batch}")
            sys.exit(2)
        torch.cuda.empty_cache()
        model.make_pool(slots)
        graphs = Graphs(torch, model, sizes, args.max_batch, args.eager)
        log(f"ready in {time.perf_counter() - t_start:.1f} s (graphs {sizes})")
        serve(torch, args, model, graphs, slots, free0, free1, free_rose, total)


def serve(torch, args, model, graphs, slots, free0, free1, free_rose, total):
    rng = random.Random(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    arrivals = []
    t = 0.0
    while True:
        t += rng.expovariate(args.rate)
        if t >= args.seconds:
            break
        arrivals.append(t)
    n = len(arrivals)
    prompts = [torch.randint(0, VOCAB, (args.prompt,), generator=gen) for _ in range(n + args.warmup)]
    tok_cpu = torch.zeros(args.max_batch, dtype=torch.int64).pin_memory()
    pos_cpu = torch.zeros(args.max_batch, dtype=torch.int64).pin_memory()
    tok_np, pos_np = tok_cpu.numpy(), pos_cpu.numpy()  # element writes without torch's overhead

    lanes = [None] * args.max_batch  # lane -> [request index, last token, tokens made, first t, last t]
    ttft = [0.0] * n
    tpot = [0.0] * n
    itl = []
    busy = [0.0]

    def run_once(ids, arrive, record):
        """Serves requests ids (arrival times arrive, perf_counter seconds) to their end."""
        pending = list(zip(ids, arrive))
        head = 0
        active = 0
        while head < len(pending) or active:
            now = time.perf_counter()
            while head < len(pending) and pending[head][1] <= now and None in lanes:
                rid, arr = pending[head]
                head += 1
                lane = lanes.index(None)
                s = time.perf_counter()
                first = int(model.prefill(prompts[rid].to("cuda", non_blocking=True), lane))
                done = time.perf_counter()
                busy[0] += done - s
                lanes[lane] = [rid, first, 1, done, done]
                active += 1
                if record:
                    ttft[rid] = (done - arr) * 1000.0
                now = done
            if active:
                top = max(i for i, r in enumerate(lanes) if r is not None) + 1
                b = graphs.size_for(top)
                for i in range(b):
                    r = lanes[i]
                    tok_np[i] = r[1] if r else 0
                    pos_np[i] = args.prompt + r[2] - 1 if r else 0
                s = time.perf_counter()
                graphs.tok[:b].copy_(tok_cpu[:b], non_blocking=True)
                graphs.pos[:b].copy_(pos_cpu[:b], non_blocking=True)
                nxt = graphs.run(b).tolist()  # waits for the step
                done = time.perf_counter()
                busy[0] += done - s
                for i in range(b):
                    r = lanes[i]
                    if r is None:
                        continue
                    if record:
                        itl.append((done - r[4]) * 1000.0)
                    r[1], r[2], r[4] = nxt[i], r[2] + 1, done
                    if r[2] >= args.gen:
                        if record:
                            tpot[r[0]] = (done - r[3]) * 1000.0 / (args.gen - 1)
                        lanes[i] = None
                        active -= 1
            elif head < len(pending):
                wait_until(pending[head][1])

    with torch.inference_mode():
        w0 = time.perf_counter()
        run_once(list(range(n, n + args.warmup)), [w0] * args.warmup, False)
        log(f"{args.warmup} warm-up requests in {time.perf_counter() - w0:.2f} s; "
            f"{n} requests over {args.seconds:.0f} s")
        gc.collect()
        gc.freeze()
        gc.disable()
        busy[0] = 0.0
        wall_start = time.time()
        t0 = time.perf_counter()
        print(f"window_start {wall_start:.6f}", flush=True)
        run_once(list(range(n)), [t0 + a for a in arrivals], True)
        t_end = time.perf_counter()
        wall_end = time.time()
        print(f"window_end {wall_end:.6f}", flush=True)

    if args.out:
        with open(args.out, "w") as f:
            f.writelines(f"{v:.4f}\n" for v in ttft)
    if args.detail_out:
        with open(args.detail_out, "w") as f:
            for i in range(n):
                f.write(f"{arrivals[i]:.6f}\t{ttft[i]:.4f}\t{tpot[i]:.4f}\n")
    st, sp, si = sorted(ttft), sorted(tpot), sorted(itl)
    r4 = lambda x: round(x, 4)  # noqa: E731
    result = {
        "kind": "service", "shape": "llm", "requests": n,
        "p50_ms": r4(nearest_rank(st, 50)), "p90_ms": r4(nearest_rank(st, 90)),
        "p99_ms": r4(nearest_rank(st, 99)),
        "ttft_p50_ms": r4(nearest_rank(st, 50)), "ttft_p99_ms": r4(nearest_rank(st, 99)),
        "tpot_p50_ms": r4(nearest_rank(sp, 50)), "tpot_p99_ms": r4(nearest_rank(sp, 99)),
        "itl_p50_ms": r4(nearest_rank(si, 50)), "itl_p99_ms": r4(nearest_rank(si, 99)),
        "mean_ms": r4(sum(st) / max(n, 1)), "max_ms": r4(st[-1] if st else float("nan")),
        "busy_fraction": r4(busy[0] / (t_end - t0)),
        "window_start": round(wall_start, 6), "window_end": round(wall_end, 6),
        "weights_gib": r4(model.weights_bytes() / GIB),
        "kv_pool_gib": r4(slots * model.slot_bytes() / GIB), "slots": slots,
        "free_before_gib": r4(free0 / GIB), "free_after_gib": r4(free1 / GIB),
        "free_rose": free_rose, "total_gib": r4(total / GIB), "graph_sizes": graphs.sizes,
    }
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
