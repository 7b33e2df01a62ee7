#!/usr/bin/env python3
"""Census workload: PyTorch eager. A few training steps of a small conv net, fed from pinned host
memory with non_blocking copies, plus work on a side stream, events and D2H reads: cudart
(through cuGetProcAddress), cuBLAS and cuDNN (through dlsym) all submit. Prints
`census_torch ok loss=<x>`; exit 0. ~10 s on an H100, mostly start-up."""
import argparse
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=20)
    a = p.parse_args()
    if not torch.cuda.is_available():
        print("census_torch: no CUDA device", file=sys.stderr)
        return 1
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
        nn.Conv2d(32, 32, 3, padding=1, stride=2), nn.ReLU(),
        nn.Flatten(), nn.Linear(32 * 16 * 16, 10)).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x_host = torch.randn(64, 3, 32, 32).pin_memory()
    y_host = torch.randint(10, (64,))
    for _ in range(a.steps):
        x = x_host.to(dev, non_blocking=True)   # cuMemcpyHtoDAsync from pinned memory
        y = y_host.to(dev)                      # pageable copy
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    side = torch.cuda.Stream()
    done = torch.cuda.Event()
    with torch.cuda.stream(side):
        z = torch.zeros(1 << 20, device=dev)
        z.add_(1.0)
        done.record(side)
    done.synchronize()
    w = torch.empty(1 << 20, device=dev)
    w.copy_(z)                                  # D2D copy
    total = w.sum().item()                      # D2H
    back = x.cpu()                              # D2H of a whole tensor
    torch.cuda.synchronize()
    if total != float(1 << 20) or not torch.equal(back, x_host):
        print(f"census_torch: wrong results: sum={total}", file=sys.stderr)
        return 1
    print(f"census_torch ok loss={loss.item():.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
