#!/usr/bin/env python3
"""Idle LLM-shaped services pooled on one GPU (issue 45 item 5; run by pool_services.sh).

    pool_services.py serve --sock PATH [--weights-gib 26] [--kv-gib 27] [--seed K]
    pool_services.py drive --socks A,B,C,D [--seconds 90] [--think 2,4] [--seed 1]

serve: a service holding --weights-gib GiB of bf16 weights (1 GiB matrices of 32768 x 16384,
torch.randn, seeded) and a KV pool of --kv-gib GiB (1 GiB tensors, each filled with its index),
all allocated with PyTorch's caching allocator as an engine does. It computes its reference
answer once (`ready <first> <kv>` on stdout), then serves one request per connection on a Unix
socket: a prefill (one GEMV through every weight matrix and a read of one KV tensor: the first
token, sent as `first <digest>` the moment it is known) and --decode decode steps (each another
GEMV through every matrix), then `done <digest> <kv>`. Digests are sums over the GEMV outputs in
float64: a service whose memory came back altered answers differently from its reference.

drive: requests arrive one at a time to a service picked at random (uniformly, seeded), after a
think time uniform in --think seconds; a request to a service other than the last one is a
switch. Prints one JSON line: per kind (switch, same) the count and TTFT p50/p90/p99/max in ms
(TTFT: from connecting to the `first` line), the total request time's p50, and `mismatches`
(answers that differ from the service's reference; must be 0).
"""
import argparse
import json
import os
import random
import socket
import sys
import time


def serve(a):
    import torch

    torch.manual_seed(a.seed)
    dev = torch.device("cuda")
    rows, cols = 32768, 16384  # 1 GiB of bf16
    # The kernels used below run once on small tensors first, as an engine's profiling run does
    # before it fills the GPU: a module loads device memory of the driver's own on its first
    # launch, which fails at once on a full GPU.
    small = torch.randn(64, 64, device=dev, dtype=torch.bfloat16)
    (small @ small[0]).double().sum().item()
    torch.full((64, 64), 1.0, device=dev, dtype=torch.bfloat16).double().sum().item()
    weights = [torch.randn(rows, cols, device=dev, dtype=torch.bfloat16) for _ in range(a.weights_gib)]
    kv = [torch.full((rows, cols), float(i % 7), device=dev, dtype=torch.bfloat16) for i in range(a.kv_gib)]
    x = torch.ones(cols, device=dev, dtype=torch.bfloat16)

    def first():
        s = torch.zeros((), device=dev, dtype=torch.float64)
        for w in weights:
            s += (w @ x).double().sum()
        k = kv[len(kv) // 2][0].double().sum()
        return float(s.item()), float(k.item())

    def decode():
        s = torch.zeros((), device=dev, dtype=torch.float64)
        for _ in range(a.decode):
            for w in weights:
                s += (w @ x).double().sum()
        return float(s.item())

    kv_all = lambda: float(sum(t[:: 4096].double().sum().item() for t in kv))  # noqa: E731
    ref_first, ref_k = first()
    ref_kv = kv_all()
    torch.cuda.synchronize()
    if os.path.exists(a.sock):
        os.unlink(a.sock)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(a.sock)
    srv.listen(4)
    print(f"ready {ref_first!r} {ref_kv!r} pid={os.getpid()}", flush=True)
    while True:
        conn, _ = srv.accept()
        with conn:
            line = conn.makefile().readline().strip()
            if line == "stop":
                break
            f, k = first()
            conn.sendall(f"first {f!r} {int(f == ref_first and k == ref_k)}\n".encode())
            d = decode()
            whole = kv_all() if line == "check" else ref_kv
            conn.sendall(f"done {d!r} {int(whole == ref_kv)}\n".encode())
    print("stopped", flush=True)


def ask(path, what="go"):
    t0 = time.perf_counter()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(300)
    s.connect(path)
    s.sendall((what + "\n").encode())
    f = s.makefile()
    first = f.readline().split()
    t1 = time.perf_counter()
    done = f.readline().split()
    t2 = time.perf_counter()
    s.close()
    ok = len(first) == 3 and first[2] == "1" and len(done) == 3 and done[2] == "1"
    return (t1 - t0) * 1e3, (t2 - t0) * 1e3, ok


def pct(v, p):
    if not v:
        return None
    v = sorted(v)
    return round(v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))], 2)


def drive(a):
    socks = a.socks.split(",")
    rng = random.Random(a.seed)
    lo, hi = (float(t) for t in a.think.split(","))
    last = None
    rows = []
    end = time.time() + a.seconds
    while time.time() < end:
        time.sleep(rng.uniform(lo, hi))
        k = rng.randrange(len(socks))
        ttft, total, ok = ask(socks[k], "check" if a.check else "go")
        kind = "same" if k == last else "switch"
        rows.append((kind, k, ttft, total, ok))
        print(f"request {time.time():.3f} svc={k} {kind} ttft_ms={ttft:.1f} total_ms={total:.1f} ok={int(ok)}", flush=True)
        last = k
    out = {"kind": "pool", "services": len(socks), "requests": len(rows),
           "mismatches": sum(1 for r in rows if not r[4])}
    for kind in ("switch", "same"):
        t = [r[2] for r in rows if r[0] == kind]
        out[kind] = {"n": len(t), "ttft_p50": pct(t, 50), "ttft_p90": pct(t, 90), "ttft_p99": pct(t, 99),
                     "ttft_max": pct(t, 100), "total_p50": pct([r[3] for r in rows if r[0] == kind], 50)}
    print(json.dumps(out), flush=True)
    for p in socks:
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(60)
            s.connect(p)
            s.sendall(b"stop\n")
            s.close()
        except OSError:
            pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--sock", required=True)
    s.add_argument("--weights-gib", type=int, default=26)
    s.add_argument("--kv-gib", type=int, default=27)
    s.add_argument("--decode", type=int, default=8)
    s.add_argument("--seed", type=int, default=0)
    d = sub.add_parser("drive")
    d.add_argument("--socks", required=True)
    d.add_argument("--seconds", type=float, default=90)
    d.add_argument("--think", default="2,4")
    d.add_argument("--seed", type=int, default=1)
    d.add_argument("--check", action="store_true", help="each request also sums every KV tensor")
    a = ap.parse_args()
    serve(a) if a.mode == "serve" else drive(a)


if __name__ == "__main__":
    sys.exit(main())
