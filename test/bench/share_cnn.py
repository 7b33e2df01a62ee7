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

Each step, its --log line and the JSON result line on stdout are train_loop.py's, as for
prio_train.py, with "model": "resnet50" in the result. SIGTERM or SIGINT ends the run after the
current step, with that line and "stopped": "signal"; exit 0.

--ready-file R --go-file G (both or neither), as prio_train.py's: the model is built on the CPU,
R created, and the first CUDA call (the model's move to the GPU) waits until G exists
(test/bench/share_paths.sh, PAIR_PREPARED).
"""
import argparse
import sys

from train_loop import stop_on_signals, train, wait_for_go  # this folder's step loop


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=400, help="training steps (default 400)")
    ap.add_argument("--batch", type=int, default=128, help="images per step (default 128)")
    ap.add_argument("--pool", type=int, default=4, help="distinct batches, used in turn (default 4)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the synthetic data (default 0)")
    ap.add_argument("--log", default="", help="file to append `step wall_time loss` lines to")
    ap.add_argument("--ready-file", default="", help="created once the model is built on the CPU")
    ap.add_argument("--go-file", default="", help="the first CUDA call waits until it exists")
    args = ap.parse_args()
    if args.steps < 1 or args.batch < 1 or args.pool < 1:
        ap.error("--steps, --batch and --pool must be >= 1")
    if bool(args.ready_file) != bool(args.go_file):
        ap.error("--ready-file and --go-file go together")

    stop = stop_on_signals()

    import torch
    import torch.nn.functional as F
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.resnet50(weights=None)
    if args.go_file and not wait_for_go(args.ready_file, args.go_file, stop):
        return 0
    model = model.cuda().to(memory_format=torch.channels_last)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    gen = torch.Generator(device="cuda").manual_seed(args.seed)
    pool = []
    for _ in range(args.pool):
        x = torch.randn(args.batch, 3, 224, 224, device="cuda", generator=gen)
        y = torch.randint(0, 1000, (args.batch,), device="cuda", generator=gen)
        pool.append((x.contiguous(memory_format=torch.channels_last), y))

    def loss_of(step):
        x, y = pool[(step - 1) % args.pool]
        return F.cross_entropy(model(x), y)

    train(torch, opt, loss_of, args.steps, args.log, stop, {"model": "resnet50"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
