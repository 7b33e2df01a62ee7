#!/usr/bin/env python3
"""A batch training beside the inference service of test/bench/priority.sh: GPT-2 small.

    python3 test/bench/prio_train.py --log train.log                # 400 steps
    gshare run -p 0 --name train1 -- python3 test/bench/prio_train.py --steps 1500 --log t1.log

Model: transformers' GPT2LMHeadModel(GPT2Config()) (124 M parameters, context 1024), randomly
initialized after torch.manual_seed(0); fp32 weights, forward and loss under
torch.autocast(bfloat16); AdamW, lr 1e-4. Data: --batch x --seq token ids in [0, 50257) drawn
on the CPU from a torch.Generator seeded with --seed, one fresh batch per step, moved to the
GPU; the labels are the inputs (the model shifts them). The same arguments give the same
batches in every run. --batch sets the memory: 8 x 1024 is meant to reserve about 12 GiB
(check peak_gib).

Each step, its --log line and the JSON result line on stdout are train_loop.py's:
  {"kind": "train", "steps": n, "seconds", "steps_per_s", "last_loss", "peak_gib"}
SIGTERM or SIGINT ends the run after the current step, with that line and "stopped": "signal";
exit 0.

--ready-file R --go-file G (both or neither): the interpreter starts, imports and builds the
model on the CPU (about 15-20 s of one CPU on the H200 machine, before any CUDA call), creates
R, then waits (polling every 10 ms) until G exists, writes `go <epoch>` on stderr and only then
makes its first CUDA call (the model's move to the GPU). So its arrival at the GPU can be put at
a chosen moment, apart from its CPU start-up (test/bench/priority.sh, ARRIVE_PREPARED).
SIGTERM or SIGINT while it waits: exit 0 with no result line (it never trained).

--context-only (with --ready-file/--go-file): at the go it only creates its CUDA context
(torch.cuda.synchronize(): cuInit and the primary context, through the shim when preloaded, no
memory allocated), writes `context <epoch>` on stderr and sleeps until SIGTERM or SIGINT, then
exits 0 with no result line: a second process on the GPU that holds a context and never asks for
memory, the control for what a training waiting for memory costs the service beside it.
"""
import argparse
import sys
import time

from train_loop import stop_on_signals, train, wait_for_go  # this folder's step loop

VOCAB = 50257


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=400, help="training steps (default 400)")
    ap.add_argument("--batch", type=int, default=8, help="sequences per step (default 8)")
    ap.add_argument("--seq", type=int, default=1024, help="tokens per sequence (default 1024)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the synthetic data (default 0)")
    ap.add_argument("--log", default="", help="file to append `step wall_time loss` lines to")
    ap.add_argument("--ready-file", default="", help="created once the model is built on the CPU")
    ap.add_argument("--go-file", default="", help="the first CUDA call waits until it exists")
    ap.add_argument("--context-only", action="store_true",
                    help="at the go, create the CUDA context only, then sleep until signalled")
    args = ap.parse_args()
    if args.steps < 1 or args.batch < 1 or not 1 <= args.seq <= 1024:
        ap.error("--steps and --batch must be >= 1, --seq within 1..1024")
    if bool(args.ready_file) != bool(args.go_file):
        ap.error("--ready-file and --go-file go together")
    if args.context_only and not args.go_file:
        ap.error("--context-only needs --ready-file and --go-file")

    stop = stop_on_signals()

    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config())
    if args.go_file and not wait_for_go(args.ready_file, args.go_file, stop):
        return 0
    if args.context_only:
        torch.cuda.synchronize()
        print(f"context {time.time():.6f}", file=sys.stderr, flush=True)
        while not stop:
            time.sleep(0.05)
        return 0
    model = model.cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    gen = torch.Generator().manual_seed(args.seed)

    def loss_of(_step):
        ids = torch.randint(0, VOCAB, (args.batch, args.seq), generator=gen).cuda()
        return model(input_ids=ids, labels=ids).loss

    train(torch, opt, loss_of, args.steps, args.log, stop)
    return 0


if __name__ == "__main__":
    sys.exit(main())
