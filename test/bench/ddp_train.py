#!/usr/bin/env python3
"""A deterministic data-parallel (DDP) training over one or several GPUs, for gshare's multi-GPU
benchmark (test/bench/multi_gpu.sh): a job of `gshare submit --gpus N` runs it on its N GPUs.

    torchrun --standalone --nproc_per_node 2 test/bench/ddp_train.py --gib 8 --steps 150 --seed 1
    python3 test/bench/ddp_train.py --gib 8 --steps 150          # one process, no torchrun
    python3 test/bench/ddp_train.py --device cpu --gib 0.01 --steps 3   # smoke test (seconds)

Each rank trains on cuda:LOCAL_RANK (backend NCCL; gloo with --device cpu) with NVLink multicast
off (NCCL_NVLS_ENABLE=0 unless set). Output of rank 0: a `config ...` line, `step <i> loss
<x.xxxxxx>` (the mean of the ranks' losses) every --log-every steps and at the last, then
`done steps=<n> seconds=<wall since start> world=<N> devices=<uuid,...>`: the UUID of each
rank's device (rank order, `GPU-` + torch.cuda.get_device_properties(dev).uuid, as nvidia-smi
writes it; `cpu` on the CPU), so that a caller sees which physical GPUs the job used.

Work per rank, all of it from the arguments alone (nothing measured), so that a bare run and a
run under gshare do the same: the model of mem_train.py (--depth residual blocks of width W, a
head to 256 classes) with W chosen so that parameters, gradients, Adam's two moments (16 bytes a
parameter; DDP's buckets are views of the gradients) take --model-share of --gib; a batch of B
rows per rank (B from --step-ms at --assumed-tflops, capped so that activations stay under 30 %
of --gib); a resident dataset per rank filling the rest to ~95 % of --gib (NCCL's buffers lie
outside PyTorch's allocator). Every step reads the whole dataset (its mean row is subtracted from
the batch) and takes the batch from consecutive rows; labels come from a fixed teacher.

Determinism: fixed seeds (the model's the same on every rank, each rank's data from a seed of
its own), fp32 without TF32, torch.use_deterministic_algorithms and a fixed cuBLAS workspace
(examples/training.py set_deterministic). The gradient all-reduce is deterministic for a fixed
world size on the same topology (NCCL picks the same algorithm and chunking each time); with 2
ranks every element is one addition a+b, which is exact whatever the order, so two runs of the
same command print the same `step` lines. With more ranks this rests on that NCCL assumption.

Cost on 2 H100s (PyTorch 2.11): --gib 8 gives W 4096, B 9824 (the sizes of `mem_train.py --gib
8`); with --steps 150 torchrun takes 44 s (`done seconds=34.6`), and two such runs at once take
77 s together, with the same `step` lines as alone.
"""
import time

T_START = time.perf_counter()  # before importing torch: `seconds=` covers import and CUDA init

import argparse  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")            # NVLink multicast stays off
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples"))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

from mem_train import CLASSES, DeepMLP, round_to  # noqa: E402
from training import cross_entropy, set_deterministic  # noqa: E402

GIB = 1 << 30


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gib", type=float, default=8.0, help="device memory per rank in GiB (default 8)")
    p.add_argument("--steps", type=int, default=150,
                   help="training steps (default 150: ~25 s at --gib 8 on an H100)")
    p.add_argument("--log-every", type=int, default=10, help="print the loss every K steps (default 10)")
    p.add_argument("--depth", type=int, default=8, help="residual blocks (default 8)")
    p.add_argument("--model-share", type=float, default=0.25,
                   help="share of --gib for parameters, gradients and Adam state (default 0.25)")
    p.add_argument("--step-ms", type=float, default=250.0,
                   help="GPU time per step that the default batch aims at (default 250)")
    p.add_argument("--assumed-tflops", type=float, default=40.0,
                   help="fp32 throughput assumed for --step-ms (default 40)")
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", choices=["cuda", "cpu"],
                   default="cuda" if torch.cuda.is_available() else "cpu")
    a = p.parse_args(argv)
    if a.gib <= 0 or min(a.steps, a.log_every, a.depth) < 1 or not 0 < a.model_share < 0.6:
        p.error("--gib > 0, --steps, --log-every, --depth >= 1 and --model-share within 0..0.6")
    return a


def plan(a):
    """Width, batch and dataset rows per rank from the arguments alone."""
    g = a.gib * GIB
    d = a.depth
    w = round_to(math.sqrt(a.model_share * g / (16 * d)), 256 if g >= GIB else 32)
    b = round_to(a.step_ms / 1000 * a.assumed_tflops * 1e12 / (6 * w * w * d), 64 if g >= GIB else 32)
    act_cap = int(0.3 * g / (8 * w * d))
    if b > act_cap:
        b = max(8, act_cap // 8 * 8)
    state_bytes = 16 * d * w * w + 16 * w * CLASSES
    other_bytes = 8 * b * w * d + 6 * d * w * w + 16 * b * CLASSES   # as mem_train.py measured
    rows = max(2 * b, int((0.95 * g - state_bytes - other_bytes) // (4 * w)))
    return w, b, rows


def device_uuid(device):
    if device.type != "cuda":
        return "cpu"
    u = str(torch.cuda.get_device_properties(device).uuid)
    return u if u.startswith("GPU-") else "GPU-" + u


def main(argv=None):
    a = parse_args(argv)
    distributed = "WORLD_SIZE" in os.environ          # started by torchrun
    rank = int(os.environ.get("RANK", 0))
    world = int(os.environ.get("WORLD_SIZE", 1))
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if a.device == "cuda":
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    if distributed:
        if a.device == "cuda":
            dist.init_process_group("nccl", device_id=device)
        else:
            dist.init_process_group("gloo")
    set_deterministic(a.seed)                          # the same initial model on every rank
    w, b, rows = plan(a)
    if rank == 0:
        print(f"config gib={a.gib:g} width={w} depth={a.depth} batch={b} classes={CLASSES} "
              f"dataset_rows={rows} dataset_gib={rows * w * 4 / GIB:.2f} steps={a.steps} "
              f"world={world}", flush=True)

    model = DeepMLP(w, a.depth, device)
    if distributed:
        model = DDP(model, device_ids=[local_rank] if a.device == "cuda" else None,
                    gradient_as_bucket_view=True)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    g = torch.Generator(device=device)
    g.manual_seed(a.seed + 1)                          # the teacher: the same on every rank
    teacher = torch.randn(w, CLASSES, generator=g, device=device)
    g.manual_seed(a.seed * 1009 + 2 + rank)            # the data: each rank its own
    dataset = torch.empty(rows, w, device=device)
    dataset.normal_(generator=g)

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    model.train()
    sync()
    span = rows - b + 1
    for i in range(a.steps):
        center = dataset.mean(dim=0)                   # reads the whole dataset every step
        lo = (i * b) % span
        x = dataset[lo:lo + b] - center
        with torch.no_grad():
            y = (x @ teacher).argmax(dim=1)
        opt.zero_grad(set_to_none=True)
        loss = cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if i % a.log_every == 0 or i == a.steps - 1:   # the same steps on every rank
            mean = loss.detach().clone()
            if distributed:
                dist.all_reduce(mean)
            mean /= world
            if rank == 0:
                print(f"step {i} loss {mean.item():.6f}", flush=True)
    sync()
    uuids = [device_uuid(device)]
    if distributed:
        uuids = [None] * world
        dist.all_gather_object(uuids, device_uuid(device))
    if rank == 0:
        print(f"done steps={a.steps} seconds={time.perf_counter() - T_START:.3f} world={world} "
              f"devices={','.join(uuids)}", flush=True)
    if distributed:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
