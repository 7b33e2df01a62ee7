#!/usr/bin/env python3
"""Smoke job: a few seeded matmuls, then a checksum. Runs on cuda or cpu in well under 5 s.

    python3 examples/hello_gpu.py                 # cuda if available, else cpu
    gshare run -- python3 examples/hello_gpu.py   # must print the same checksum as the bare run

Prints `hello device=<dev> n=<n> iters=<k> checksum=<value> seconds=<wall>`; exit 0.
Matmuls in fp32 with TF32 off and deterministic cuBLAS, so the checksum is reproducible on
one machine (it differs between cpu and cuda).
"""
import argparse
import os
import sys
import time

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", choices=["cuda", "cpu"],
                   default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--n", type=int, default=512, help="matrix side")
    p.add_argument("--iters", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)

    t0 = time.perf_counter()
    torch.use_deterministic_algorithms(True)
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device(a.device)
    g = torch.Generator(device=dev)
    g.manual_seed(a.seed)
    x = torch.randn(a.n, a.n, generator=g, device=dev)
    w = torch.randn(a.n, a.n, generator=g, device=dev) / a.n ** 0.5
    for _ in range(a.iters):
        x = torch.tanh(x @ w)
    checksum = x.double().sum().item()   # D2H copy + sync
    print(f"hello device={dev.type} n={a.n} iters={a.iters} checksum={checksum:.9f} "
          f"seconds={time.perf_counter() - t0:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
