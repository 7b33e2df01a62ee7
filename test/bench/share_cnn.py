#!/usr/bin/env python3
"""A ResNet-50 training for test/bench/share_paths.sh: the CNN half of the fitting pair.

    python3 test/bench/share_cnn.py --steps 400 --log cnn.log
    gshare run -J cnn -- python3 test/bench/share_cnn.py --steps 400

Model: torchvision's resnet50(weights=None) (25.6 M parameters, 1,000 classes), randomly
initialized after torch.manual_seed(0), channels_last; fp32 weights, forward and loss under
torch.autocast(bfloat16); SGD with momentum 0.9, lr 0.05. Data: a pool of --pool batches of
--batch x 3 x 224 x 224 images and labels drawn once on the GPU from a generator seeded with
--seed, used in turn (no host loader: the pair measures GPU sharing, not input pipelines).
Batch 128 reserves about 20 GiB.

Each step: forward, loss, backward, optimizer step, zero_grad, loss.item() (which waits for
the GPU), then one line `<step> <time.time()> <loss>` appended to --log (steps from 1),
flushed. At the end one JSON line on stdout, as prio_train.py's:
  {"kind": "train", "model": "resnet50", "steps": n, "seconds": <first step's start to last
   step's end>, "steps_per_s", "last_loss", "peak_gib": torch.cuda.max_memory_reserved() / 2**30}
SIGTERM or SIGINT ends the run after the current step, with that JSON line and
"stopped": "signal"; exit 0.
"""
import argparse
import json
import signal
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=400, help="training steps (default 400)")
    ap.add_argument("--batch", type=int, default=128, help="images per step (default 128)")
    ap.add_argument("--pool", type=int, default=4, help="distinct batches, used in turn (default 4)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the synthetic data (default 0)")
    ap.add_argument("--log", default="", help="file to append `step wall_time loss` lines to")
    args = ap.parse_args()
    if args.steps < 1 or args.batch < 1 or args.pool < 1:
        ap.error("--steps, --batch and --pool must be >= 1")

    stop = []

    def on_signal(signum, _frame):  # ends the loop at the next step's end
        stop.append(signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    import torch
    import torch.nn.functional as F
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.resnet50(weights=None).cuda().to(memory_format=torch.channels_last)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    gen = torch.Generator(device="cuda").manual_seed(args.seed)
    pool = []
    for _ in range(args.pool):
        x = torch.randn(args.batch, 3, 224, 224, device="cuda", generator=gen)
        y = torch.randint(0, 1000, (args.batch,), device="cuda", generator=gen)
        pool.append((x.contiguous(memory_format=torch.channels_last), y))
    log = open(args.log, "a", buffering=1) if args.log else None

    steps = 0
    last = None
    t_first = None
    t_last = time.time()
    for step in range(1, args.steps + 1):
        if stop:
            break
        x, y = pool[(step - 1) % args.pool]
        if t_first is None:
            t_first = time.time()
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        last = loss.item()
        t_last = time.time()
        steps = step
        if log:
            log.write(f"{step} {t_last:.6f} {last:.9g}\n")
    if log:
        log.close()

    seconds = t_last - t_first if t_first is not None else 0.0
    result = {
        "kind": "train",
        "model": "resnet50",
        "steps": steps,
        "seconds": round(seconds, 3),
        "steps_per_s": round(steps / seconds, 4) if seconds > 0 else 0.0,
        "last_loss": last,
        "peak_gib": round(torch.cuda.max_memory_reserved() / 2**30, 3),
    }
    if stop:
        result["stopped"] = "signal"
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
