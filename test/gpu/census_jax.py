#!/usr/bin/env python3
"""Census workload: JAX/XLA. A jit'd matmul loss and its jit'd gradient in a descent loop, with
host<->device transfers; XLA reaches the driver through its own dlsym'd entry points (and may use
CUDA graphs for some computations). Prints `census_jax ok loss=<x>`; exit 0. ~10-20 s."""
import os
import sys

# Allocate as needed instead of grabbing 75% of the GPU up front: the census is about submissions,
# and a shared GPU should not see one small job hold most of its memory.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import argparse  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    a = p.parse_args()
    if jax.default_backend() != "gpu":
        print(f"census_jax: backend is {jax.default_backend()}, not gpu", file=sys.stderr)
        return 1
    rng = np.random.default_rng(0)
    x = jax.device_put(rng.standard_normal((1024, 512), dtype=np.float32))   # H2D
    target = jax.device_put(rng.standard_normal((1024, 256), dtype=np.float32))
    w = jnp.zeros((512, 256), dtype=jnp.float32)

    @jax.jit
    def loss(w, x, t):
        return jnp.mean((jnp.tanh(x @ w) - t) ** 2)

    grad = jax.jit(jax.grad(loss))
    first = float(loss(w, x, target))                     # D2H
    for _ in range(a.steps):
        w = w - 0.5 * grad(w, x, target)
    last = float(loss(w, x, target))
    w_host = np.asarray(w)                                # D2H of an array
    if not (last < first) or not np.isfinite(w_host).all():
        print(f"census_jax: loss did not fall: {first} -> {last}", file=sys.stderr)
        return 1
    print(f"census_jax ok loss={last:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
