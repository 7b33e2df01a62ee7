#!/usr/bin/env python3
"""Census workload: a Triton kernel (vector add, written here) launched by Triton's own launcher
stub (built with gcc at first use; it calls the driver directly), on tensors owned by PyTorch.
Prints `census_triton ok launches=<n>`; exit 0. ~10-30 s (first compile)."""
import argparse
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--launches", type=int, default=50)
    a = p.parse_args()
    if not torch.cuda.is_available():
        print("census_triton: no CUDA device", file=sys.stderr)
        return 1
    n = 98432   # not a multiple of the block: the mask matters
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    x = torch.rand(n, device="cuda", generator=g)
    y = torch.rand(n, device="cuda", generator=g)
    out = torch.empty_like(x)
    acc = torch.zeros_like(x)
    grid = (triton.cdiv(n, 1024),)
    for _ in range(a.launches):
        add_kernel[grid](x, y, out, n, BLOCK=1024)
        add_kernel[grid](acc, out, acc, n, BLOCK=1024)
    torch.cuda.synchronize()
    if not torch.allclose(acc, (x + y) * a.launches, rtol=1e-4):
        print("census_triton: wrong results", file=sys.stderr)
        return 1
    print(f"census_triton ok launches={2 * a.launches}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
