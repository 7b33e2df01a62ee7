#!/usr/bin/env python3
"""A JAX job with JAX's default GPU memory preallocation (75 % of the memory it sees), for
test/bench/jax_prealloc.sh: how gshare's memory engines deal with it.

    python3 test/bench/jax_prealloc.py --steps 200      # ~10-20 s on an H100

It runs --steps steps of x = tanh(x @ w) on 8192 x 8192 fp32 matrices and prints
`jax limit_gib=<the allocator's pool size> in_use_gib=<bytes in use> checksum=<sum of x>`;
the checksum is the same in every run of the same arguments (deterministic on one GPU).
"""
import argparse
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--n", type=int, default=8192)
    a = p.parse_args()
    import jax
    import jax.numpy as jnp

    t0 = time.time()
    key = jax.random.PRNGKey(0)
    x = jax.random.normal(key, (a.n, a.n), jnp.float32)
    w = jax.random.normal(jax.random.PRNGKey(1), (a.n, a.n), jnp.float32) / a.n ** 0.5
    step = jax.jit(lambda x: jnp.tanh(x @ w))
    for _ in range(a.steps):
        x = step(x)
    checksum = float(jnp.sum(x))
    stats = jax.devices()[0].memory_stats() or {}
    print("jax limit_gib=%.2f in_use_gib=%.2f checksum=%.6f seconds=%.1f" % (
        stats.get("bytes_limit", 0) / 2**30, stats.get("bytes_in_use", 0) / 2**30, checksum,
        time.time() - t0), flush=True)


if __name__ == "__main__":
    main()
