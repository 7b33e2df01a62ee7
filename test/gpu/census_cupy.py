#!/usr/bin/env python3
"""Census workload: CuPy. Elementwise arithmetic, a reduction, a cuBLAS matmul, a RawKernel
(NVRTC-compiled, launched through CuPy's own driver binding), copies on a non-blocking stream and
a memset. Prints `census_cupy ok checksum=<x>`; exit 0. ~5-15 s (first NVRTC compile)."""
import argparse
import sys

import cupy as cp
import numpy as np

ADD_ONE = r"""
extern "C" __global__ void add_one(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}
"""


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=20)
    a = p.parse_args()
    n = 1 << 20
    host = np.arange(n, dtype=np.float32)
    x = cp.asarray(host)                                   # H2D
    y = cp.ones(n, dtype=cp.float32)
    for _ in range(a.reps):
        y = x * 0.5 + y                                    # elementwise kernels
    s = float(y.sum())                                     # reduction + D2H
    m = cp.asarray(np.random.default_rng(0).standard_normal((512, 512), dtype=np.float32))
    mm = m @ m                                             # cuBLAS
    kern = cp.RawKernel(ADD_ONE, "add_one")
    z = cp.zeros(n, dtype=cp.float32)                      # memset
    threads = 256
    for _ in range(a.reps):
        kern(((n + threads - 1) // threads,), (threads,), (z, cp.int32(n)))
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        w = cp.empty_like(z)
        w.set(host)                                        # async H2D on the stream
        back = w.get(stream=stream)                        # D2H on the stream
    stream.synchronize()
    zh = cp.asnumpy(z)
    expect = float(n) + a.reps * 0.5 * float(host.astype(np.float64).sum())
    ok = (abs(s - expect) <= 1e-3 * expect and (zh == a.reps).all() and (back == host).all()
          and bool(cp.isfinite(mm).all()))
    if not ok:
        print(f"census_cupy: wrong results: sum={s} expect={expect}", file=sys.stderr)
        return 1
    print(f"census_cupy ok checksum={s:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
