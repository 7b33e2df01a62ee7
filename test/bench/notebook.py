#!/usr/bin/env python3
"""A notebook-like GPU process: it fills GPU memory, then sits idle, as a Jupyter kernel does
between cells, until it is told to run its next cell.

    notebook.py --gib 40 --wake-file PATH [--timeout 600]

Allocates --gib GiB as 1 GiB int32 tensors filled from a seeded generator, keeps each tensor's
checksum (an int64 sum, computed on the GPU), prints `ready <epoch>`, then does no GPU work at
all until PATH exists (polled every 50 ms). Then its "next cell": the checksums again, timed
from the first GPU call to the synchronized result, compared with the first ones. Prints
`wake seconds=<s> intact=<0|1> gib=<n>` and exits 0 when intact, 3 when not.

The issue's targets (docs/benchmarks.md, "Notebooks"): under gshare, the wake of a 40 GiB
notebook whose memory went to host memory takes <= 1.0 s, data intact.
"""
import argparse
import os
import sys
import time

import torch

GIB = 1 << 30


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gib", type=int, required=True)
    ap.add_argument("--wake-file", required=True)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--seed", type=int, default=1234)
    a = ap.parse_args()
    gen = torch.Generator(device="cuda")
    gen.manual_seed(a.seed)
    n = GIB // 4
    tensors, sums = [], []
    for _ in range(a.gib):
        t = torch.randint(-(1 << 30), 1 << 30, (n,), dtype=torch.int32, device="cuda",
                          generator=gen)
        tensors.append(t)
        sums.append(t.sum(dtype=torch.int64))
    first = torch.stack(sums).cpu()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()  # the generator's temporaries: the notebook holds --gib GiB
    print("ready %.3f" % time.time(), flush=True)
    deadline = time.monotonic() + a.timeout
    while not os.path.exists(a.wake_file):
        if time.monotonic() > deadline:
            print("wake file never came", file=sys.stderr)
            return 2
        time.sleep(0.05)
    t0 = time.perf_counter()
    again = torch.stack([t.sum(dtype=torch.int64) for t in tensors]).cpu()  # synchronizes
    seconds = time.perf_counter() - t0
    intact = bool(torch.equal(first, again))
    print("wake seconds=%.3f intact=%d gib=%d" % (seconds, int(intact), a.gib), flush=True)
    return 0 if intact else 3


if __name__ == "__main__":
    sys.exit(main())
