#!/usr/bin/env python3
"""Train a torchvision ResNet-18 (weights=None) on synthetic 3x64x64 images, 10 classes.

A real, deterministic PyTorch training for gshare's demos: the same command prints exactly the
same losses bare and under `gshare run`, so any difference means gshare changed the job's work.

    python3 examples/train_cnn.py                     # H100 defaults: ~1 min of GPU work
    python3 examples/train_cnn.py --device cpu        # small run (--small is implied on CPU)
    gshare run -J cnn -- python3 examples/train_cnn.py --steps 2000

Output: `step <i> loss <x.xxxxxx>` every --log-every steps (and at the last step), then
`done steps=<n> seconds=<wall since start> train_seconds=<first step..last step> device=<dev>`.

Data: a pool of --pool batches generated once on the device with a seeded torch.Generator
(no dataset download, no host-side loader). Labels are a fixed function of the pixels (a random
projection, argmax over 10 classes), so the loss really falls.
"""
import time

T_START = time.perf_counter()  # before importing torch: `seconds=` covers import and CUDA init

import argparse
import os
import sys

# cuBLAS picks a reduction order per workspace; a fixed workspace config makes it deterministic.
# It must be in the environment before torch (and so cuBLAS) is loaded.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torchvision  # noqa: E402

from training import set_deterministic, train  # noqa: E402

# Defaults sized for an H100 in fp32 (TF32 off): ResNet-18 at 64x64 is ~0.9 GFLOP per image per
# training step, so batch 256 is ~230 GFLOP/step, an estimated 10-15 ms; 5000 steps ~ 60-75 s.
# Change them here (or with --steps / --batch).
FULL = dict(steps=2000, batch=256, image=64, log_every=100, pool=16)
SMALL = dict(steps=20, batch=16, image=32, log_every=5, pool=2)   # CPU: a few seconds on 2 cores
NUM_CLASSES = 10


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, help=f"training steps (default {FULL['steps']}, small {SMALL['steps']})")
    p.add_argument("--batch", type=int, help=f"batch size (default {FULL['batch']}, small {SMALL['batch']})")
    p.add_argument("--image", type=int, help=f"image side in pixels (default {FULL['image']}, small {SMALL['image']})")
    p.add_argument("--log-every", type=int, help="print the loss every K steps")
    p.add_argument("--pool", type=int, help="distinct batches generated up front, used in turn")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", choices=["cuda", "cpu"],
                   default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--small", action=argparse.BooleanOptionalAction, default=None,
                   help="small sizes for a quick CPU run (default: on for --device cpu)")
    a = p.parse_args(argv)
    if a.small is None:
        a.small = a.device == "cpu"
    base = SMALL if a.small else FULL
    for k, v in base.items():
        if getattr(a, k) is None:
            setattr(a, k, v)
    if a.steps < 1 or a.batch < 1 or a.log_every < 1 or a.pool < 1 or a.image < 32:
        p.error("--steps, --batch, --log-every, --pool must be >= 1 and --image >= 32")
    return a




class GlobalMeanPool(nn.Module):
    """Stands in for ResNet's AdaptiveAvgPool2d(1): same result, but its CUDA backward has no
    deterministic kernel (use_deterministic_algorithms raises), while mean()'s backward is a broadcast."""

    def forward(self, x):
        return x.mean(dim=(2, 3), keepdim=True)




def make_data(a, device):
    g = torch.Generator(device=device)
    g.manual_seed(a.seed + 1)
    shape = (a.pool, a.batch, 3, a.image, a.image)
    images = torch.randn(shape, generator=g, device=device)
    proj = torch.randn(3 * a.image * a.image, NUM_CLASSES, generator=g, device=device)
    labels = (images.flatten(2) @ proj).argmax(dim=2)          # (pool, batch): learnable labels
    return images, labels


def main(argv=None):
    a = parse_args(argv)
    set_deterministic(a.seed)
    device = torch.device(a.device)

    model = torchvision.models.resnet18(weights=None, num_classes=NUM_CLASSES)
    model.avgpool = GlobalMeanPool()
    model = model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9, weight_decay=5e-4)
    images, labels = make_data(a, device)

    return train(model, opt, images, labels, a, device, T_START)


if __name__ == "__main__":
    sys.exit(main())
