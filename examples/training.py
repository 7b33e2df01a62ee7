"""What the two example trainings share: deterministic settings, a cross-entropy that stays
deterministic on CUDA, and the training loop with its output format:

    step <i> loss <x.xxxxxx>          every --log-every steps and at the last step
    done steps=<n> seconds=<wall since start> train_seconds=<first..last step> device=<dev>

A run under `gshare run` must print exactly the bare run's `step` lines.
"""
import time

import torch


def set_deterministic(seed):
    torch.manual_seed(seed)
    # Error out rather than run a nondeterministic kernel. For SDPA's memory-efficient backward
    # (the fp32 path on CUDA) this also forces the single-split, deterministic variant.
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = False     # picks algorithms by timing: not reproducible
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")


def cross_entropy(logits, target):
    # Written out instead of F.cross_entropy: the docs list NLLLoss on CUDA among the ops that may
    # refuse deterministic mode; logsumexp and gather (whose backward has a deterministic path) do not.
    logits = logits.reshape(-1, logits.shape[-1])
    target = target.reshape(-1)
    picked = logits.gather(1, target.unsqueeze(1)).squeeze(1)
    return (torch.logsumexp(logits, dim=1) - picked).mean()


def train(model, opt, inputs, targets, a, device, t_start):
    """Runs a.steps steps over the pre-generated batches inputs[i % a.pool] / targets[...]."""
    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    model.train()
    sync()
    t_train = time.perf_counter()
    for i in range(a.steps):
        x, y = inputs[i % a.pool], targets[i % a.pool]
        opt.zero_grad(set_to_none=True)
        loss = cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if i % a.log_every == 0 or i == a.steps - 1:
            print(f"step {i} loss {loss.item():.6f}", flush=True)
    sync()
    now = time.perf_counter()
    print(f"done steps={a.steps} seconds={now - t_start:.3f} train_seconds={now - t_train:.3f} "
          f"device={device.type}", flush=True)
    return 0
