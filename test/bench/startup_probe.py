#!/usr/bin/env python3
"""Where a PyTorch job's start-up goes: prints one line of phase times (seconds) for
test/bench/mem_startup.sh, which runs it bare and under gshare, alone and two at once.

    python3 test/bench/startup_probe.py --gib 30

Output: `startup import=<s> cuda_init=<s> context=<s> first_kernel=<s> alloc=<s> fill=<s>
total=<s> free=<s> pid=<pid> t0=<epoch s> t1=<epoch s>`, each phase's own duration (t0: the interpreter
reached this file, before `import torch`; t1: the line is printed; the caller's clock around the
process gives what comes before t0 and after t1):
  import        `import torch`
  cuda_init     torch.cuda.is_available() and torch.cuda.init() (cuInit, device queries)
  context       the first allocation (the primary context is created here)
  first_kernel  a 1-element fill and a synchronize (under gshare: the first lease)
  alloc         torch.empty of --gib GiB
  fill          normal_() over it and a synchronize
total is their sum; after it, outside the start-up:
  free          the --gib tensor given back: del, torch.cuda.empty_cache() (its cuMemFree: under
                gshare the memory engine's release of its chunks) and a synchronize
"""
import time

T0 = time.perf_counter()
EPOCH0 = time.time()

import argparse  # noqa: E402
import os  # noqa: E402

import torch  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gib", type=float, default=30.0, help="bytes allocated and filled, GiB")
    a = p.parse_args()
    marks = [("import", time.perf_counter())]
    assert torch.cuda.is_available()
    torch.cuda.init()
    marks.append(("cuda_init", time.perf_counter()))
    x = torch.empty(1, device="cuda")
    marks.append(("context", time.perf_counter()))
    x.fill_(1.0)
    torch.cuda.synchronize()
    marks.append(("first_kernel", time.perf_counter()))
    big = torch.empty(int(a.gib * (1 << 30)) // 4, device="cuda")
    marks.append(("alloc", time.perf_counter()))
    big.normal_()
    torch.cuda.synchronize()
    marks.append(("fill", time.perf_counter()))
    t_free = time.perf_counter()
    del big
    torch.cuda.empty_cache()
    torch.cuda.synchronize()
    free = time.perf_counter() - t_free
    prev, fields = T0, []
    for name, t in marks:
        fields.append(f"{name}={t - prev:.3f}")
        prev = t
    print("startup", *fields, f"total={prev - T0:.3f}", f"free={free:.3f}", f"pid={os.getpid()}",
          f"t0={EPOCH0:.3f}", f"t1={time.time():.3f}", flush=True)


if __name__ == "__main__":
    main()
