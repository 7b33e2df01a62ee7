#!/usr/bin/env python3
"""Touch host memory once so that later first touches run at full speed.

    host_warm.py GIB     -> "host_warm gib=<n> seconds=<s> gbps=<GB/s>" (n: GIB, at most 80 % of
                            MemAvailable)

On the H100 benchmark machine (a VM whose kernel initializes most of its memory lazily: boot
line `deferred_init=lazy`, "Memory: 3218404K/134217336K available") a first touch of host memory
runs at 5.4 GB/s and every later one at 18-20 GB/s (docs/benchmarks.md "First touch of host
memory"). The memory benchmarks call this before their runs, so that the swap engine's host
pools, populated during the runs, do not pay a once-per-boot cost that a bare-metal machine
does not have. All GIB are held at once (freed pages would be reused otherwise), in 1 GiB
tensors filled by PyTorch's parallel fill, with transparent huge pages asked for.
"""
import os
import sys
import time

GIB = 1 << 30


def available_gib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024 / GIB
    return 0.0


def main(argv):
    if len(argv) != 2 or not argv[1].isdigit():
        print(__doc__, file=sys.stderr)
        return 2
    gib = min(int(argv[1]), int(available_gib() * 0.8))
    os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")  # PyTorch: madvise(MADV_HUGEPAGE)
    import torch
    t0 = time.perf_counter()
    held = [torch.ones(GIB, dtype=torch.uint8) for _ in range(max(gib, 0))]
    seconds = time.perf_counter() - t0
    del held
    print(f"host_warm gib={gib} seconds={seconds:.2f} gbps={gib * GIB / 1e9 / max(seconds, 1e-9):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
