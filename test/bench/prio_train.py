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

Each step: forward, loss, backward, optimizer step, zero_grad, loss.item() (which waits for
the GPU), then one line `<step> <time.time()> <loss>` appended to --log (steps from 1; the loss
with 9 significant digits), flushed. At the end one JSON line on stdout:
  {"kind": "train", "steps": n, "seconds": <first step's start to last step's end>,
   "steps_per_s", "last_loss", "peak_gib": torch.cuda.max_memory_reserved() / 2**30}
SIGTERM or SIGINT ends the run after the current step, with that JSON line and
"stopped": "signal"; exit 0.
"""
import argparse
import json
import signal
import sys
import time

VOCAB = 50257


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=400, help="training steps (default 400)")
    ap.add_argument("--batch", type=int, default=8, help="sequences per step (default 8)")
    ap.add_argument("--seq", type=int, default=1024, help="tokens per sequence (default 1024)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the synthetic data (default 0)")
    ap.add_argument("--log", default="", help="file to append `step wall_time loss` lines to")
    args = ap.parse_args()
    if args.steps < 1 or args.batch < 1 or not 1 <= args.seq <= 1024:
        ap.error("--steps and --batch must be >= 1, --seq within 1..1024")

    stop = []

    def on_signal(signum, _frame):  # ends the loop at the next step's end
        stop.append(signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config()).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    gen = torch.Generator().manual_seed(args.seed)
    log = open(args.log, "a", buffering=1) if args.log else None

    steps = 0
    last = None
    t_first = None
    t_last = time.time()
    for step in range(1, args.steps + 1):
        if stop:
            break
        ids = torch.randint(0, VOCAB, (args.batch, args.seq), generator=gen).cuda()
        if t_first is None:
            t_first = time.time()
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
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
