#!/usr/bin/env python3
"""A deterministic PyTorch training whose GPU working set is given in GiB, with a GPU/CPU time mix.

The workload of gshare's memory benchmarks (test/bench/mem_pair.sh, mem_handoff.sh): two of these
together need more memory than the GPU has, so the daemon must swap one out to run the other.

    python3 test/bench/mem_train.py --gib 30                        # ~60-80 s on an H100
    python3 test/bench/mem_train.py --gib 45 --cpu-fraction 0.5     # a "big_50" job
    python3 test/bench/mem_train.py --device cpu --gib 0.01 --steps 3   # smoke test (seconds)
    gshare run --memory swap -- python3 test/bench/mem_train.py --gib 45 --cpu-ms 37

Output: a `config ...` line (the sizes chosen), `step <i> loss <x.xxxxxx>` every --log-every steps
and at the last step, then `done steps=<n> seconds=<wall since start> train_seconds=<first step..
last step> reserved_gib=<torch.cuda.memory_reserved() after step 0> gpu_ms=<median GPU time of a
step> cpu_ms=<CPU time per step> device=<dev>`. A run under gshare must print exactly the bare
run's `step` lines.

Working set (fp32) of --gib G, all of it on the device and all of it touched by every step:
  * model: --depth D residual blocks x + Linear(GELU(LayerNorm(x))) of width W, a head to 256
    classes; parameters, gradients and the two Adam moments are 16*D*W^2 bytes. W is chosen so
    that this is --model-share of G.
  * activations and temporaries: batch B rows; ~8*B*W*D + 6*D*W^2 bytes at the peak (measured).
    B is chosen so that a step costs --step-ms of GPU time at --assumed-tflops (6*B*W^2*D FLOP
    per step), and capped so that 8*B*W*D stays under 30 % of G.
  * a resident "dataset" of rows of width W fills the rest (to ~99 % of G). Each step reads all
    of it (the mean row, subtracted from the batch) and takes its batch from consecutive rows;
    the labels come from a fixed random linear teacher.
Every size follows from the arguments alone (no measurement), so a run and its rerun under
gshare do the same work; check `reserved_gib=` against G.

Measured on an H100 (PyTorch 2.11, fp32 without TF32: ~45 TFLOP/s), reserved after step 0:
  --gib 30: W 7936, D 8, B 3328, 0.23 s per step, reserved 30.2 GiB; 254 steps by default at
            90/10: ~65 s of training + ~11 s of start-up (import, CUDA, cuBLAS) = ~76 s;
  --gib 45: W 9728, B 2176, 0.23 s per step, reserved 44.3 GiB;
  --gib 8:  W 4096, B 9824, 0.17 s per step, reserved 7.5 GiB.
The default step count makes the training last about --target-seconds (75 s) by an estimate
at --assumed-tflops (0.27 s per step at 30 GiB): the step time is never measured for it, so the
count is the same in every run of the same arguments.

CPU/GPU mix: --cpu-fraction f is the CPU share of a step's wall time when the job runs alone
(0.1: a 90/10 job, 0.5: 50/50). Each step ends with a device synchronize (so the CPU phase does
not overlap the GPU), then the job spends cpu_ms in CPU work (--cpu-work spin: a busy loop;
sleep: time.sleep). cpu_ms = f/(1-f) * (median GPU time of steps 1..--calib-steps), fixed from
then on; the CPU time owed for those first steps is spent once, right after them, so the total
CPU time is always steps * cpu_ms. Pass --cpu-ms (e.g. the bare run's cpu_ms=) to fix it
instead: a job waiting for the GPU under gshare would otherwise measure its wait.
Long steps with the same memory: --accum K runs K micro-batches of B rows per step (gradient
accumulation), so a step's GPU time (and at 50/50 its CPU phase) grows K-fold.
Note for gshare: a holder that submits no GPU work for [scheduler] idle_release (500 ms by
default) gives the lease back, and while another job waits it leaves earlier when its CPU phases
outlast two handoffs (early release, docs/memory.md).
"""
import time

T_START = time.perf_counter()  # before importing torch: `seconds=` covers import and CUDA init
T_START_EPOCH = time.time()

import argparse  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402

# cuBLAS picks a reduction order per workspace; a fixed workspace config makes it deterministic.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples"))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from training import cross_entropy, set_deterministic  # noqa: E402

GIB = 1 << 30
CLASSES = 256
CPU_DEFAULT_STEPS = 10


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gib", type=float, default=30.0, help="GPU working set in GiB (default 30)")
    p.add_argument("--cpu-fraction", type=float, default=0.1,
                   help="CPU share of a solo step's wall time, 0 <= f <= 0.9 (default 0.1: 90/10)")
    p.add_argument("--cpu-ms", type=float, help="CPU time per step in ms (default: measured, see above)")
    p.add_argument("--cpu-work", choices=["spin", "sleep"], default="spin",
                   help="how the CPU time is spent (default spin: a busy loop)")
    p.add_argument("--calib-steps", type=int, default=3,
                   help="steps 1..K timed to derive cpu_ms (default 3)")
    p.add_argument("--steps", type=int, help="training steps (default: ~--target-seconds; cpu: 10)")
    p.add_argument("--target-seconds", type=float, default=75.0,
                   help="default --steps aims at this solo run time on an H100 (default 75)")
    p.add_argument("--log-every", type=int, default=10, help="print the loss every K steps (default 10)")
    p.add_argument("--depth", type=int, default=8, help="residual blocks (default 8)")
    p.add_argument("--width", type=int, help="block width W (default: from --gib and --model-share)")
    p.add_argument("--batch", type=int, help="rows per step B (default: from --step-ms)")
    p.add_argument("--model-share", type=float, default=0.25,
                   help="share of --gib for parameters, gradients and Adam state (default 0.25)")
    p.add_argument("--step-ms", type=float, default=250.0,
                   help="GPU time per micro-batch that the default batch aims at (default 250)")
    p.add_argument("--accum", type=int, default=1,
                   help="micro-batches per step (gradient accumulation): a step's GPU time grows "
                        "K-fold, its memory does not (default 1)")
    p.add_argument("--assumed-tflops", type=float, default=40.0,
                   help="fp32 throughput assumed for --step-ms and --target-seconds (default 40)")
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--trace", action="store_true",
                   help="print the run's timeline to stderr: `trace start|ready|done <epoch s>` and "
                        "`trace gpu|cpu <step> <begin epoch s> <end epoch s>` for each phase")
    p.add_argument("--barrier", metavar="DIR:N",
                   help="before the first step, wait until N processes given the same DIR got "
                        "there (each creates DIR/<pid>): jobs started together begin their steps "
                        "at the same instant, in lock step (mem_pair.sh LOCK_STEP=1)")
    p.add_argument("--device", choices=["cuda", "cpu"],
                   default="cuda" if torch.cuda.is_available() else "cpu")
    a = p.parse_args(argv)
    if a.gib <= 0 or not 0 <= a.cpu_fraction <= 0.9:
        p.error("--gib must be > 0 and --cpu-fraction within 0..0.9")
    if min(a.depth, a.log_every, a.calib_steps, a.accum) < 1 or (a.steps is not None and a.steps < 1):
        p.error("--depth, --log-every, --calib-steps, --accum and --steps must be >= 1")
    if a.cpu_ms is not None and a.cpu_ms < 0:
        p.error("--cpu-ms must be >= 0")
    if not 0 < a.model_share < 0.6:
        p.error("--model-share must be within 0..0.6")
    return a


def round_to(x, unit):
    return max(unit, int(round(x / unit)) * unit)


def plan(a):
    """Sizes from the arguments alone: width, batch, dataset rows, estimated step time, steps."""
    g = a.gib * GIB
    d = a.depth
    w = a.width or round_to(math.sqrt(a.model_share * g / (16 * d)), 256 if g >= GIB else 32)
    flop_per_row = 6 * w * w * d
    rate = a.assumed_tflops * 1e12
    b = a.batch or round_to(a.step_ms / 1000 * rate / flop_per_row, 64 if g >= GIB else 32)
    act_cap = int(0.3 * g / (8 * w * d))
    if not a.batch and b > act_cap:
        b = max(8, act_cap // 8 * 8)
    state_bytes = 16 * d * w * w + 16 * w * CLASSES           # params, grads, Adam moments
    # Activations and the optimizer's temporaries, as seen in memory_reserved() after step 0 on
    # an H100 (PyTorch 2.11): ~8*B*W*D + 6*D*W^2 bytes within +-0.7 GB at 8, 30 and 45 GiB.
    other_bytes = 8 * b * w * d + 6 * d * w * w + 16 * b * CLASSES
    data_bytes = 0.99 * g - state_bytes - other_bytes
    rows = max(2 * b, int(data_bytes // (4 * w)))
    est_step = a.accum * (b * flop_per_row + 2 * b * w * CLASSES * 3) / rate \
        + (rows * w * 4 + 7 * 4 * d * w * w) / 2.5e12        # dataset read + Adam, ~2.5 TB/s
    steps = a.steps
    if steps is None:
        if a.device == "cpu":
            steps = CPU_DEFAULT_STEPS
        else:
            steps = max(a.calib_steps + 2, round(a.target_seconds * (1 - a.cpu_fraction) / est_step))
    return dict(width=w, batch=b, rows=rows, est_step_ms=est_step * 1000, steps=steps)


class Block(nn.Module):
    def __init__(self, width, depth, device):
        super().__init__()
        self.ln = nn.LayerNorm(width, device=device)
        self.lin = nn.Linear(width, width, device=device)
        nn.init.normal_(self.lin.weight, std=1.0 / math.sqrt(width * depth))
        nn.init.zeros_(self.lin.bias)

    def forward(self, x):
        return x + self.lin(F.gelu(self.ln(x)))


class DeepMLP(nn.Module):
    def __init__(self, width, depth, device):
        super().__init__()
        self.blocks = nn.ModuleList(Block(width, depth, device) for _ in range(depth))
        self.ln_f = nn.LayerNorm(width, device=device)
        self.head = nn.Linear(width, CLASSES, device=device)
        nn.init.normal_(self.head.weight, std=1.0 / math.sqrt(width))
        nn.init.zeros_(self.head.bias)

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x))


def spend_cpu(seconds, how):
    if seconds <= 0:
        return
    if how == "sleep":
        time.sleep(seconds)
        return
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def main(argv=None):
    a = parse_args(argv)
    set_deterministic(a.seed)
    device = torch.device(a.device)
    cfg = plan(a)
    w, b, rows, steps = cfg["width"], cfg["batch"], cfg["rows"], cfg["steps"]
    print(f"config gib={a.gib:g} width={w} depth={a.depth} batch={b} classes={CLASSES} "
          f"dataset_rows={rows} dataset_gib={rows * w * 4 / GIB:.2f} steps={steps} "
          f"est_step_ms={cfg['est_step_ms']:.0f} accum={a.accum} cpu_fraction={a.cpu_fraction:g} "
          f"cpu_work={a.cpu_work}", flush=True)

    model = DeepMLP(w, a.depth, device)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    g = torch.Generator(device=device)
    g.manual_seed(a.seed + 1)
    teacher = torch.randn(w, CLASSES, generator=g, device=device)
    dataset = torch.empty(rows, w, device=device)
    dataset.normal_(generator=g)

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    def trace(*fields):
        if a.trace:
            print("trace", *(f"{x:.3f}" if isinstance(x, float) else x for x in fields),
                  file=sys.stderr, flush=True)

    model.train()
    sync()
    if a.barrier:
        folder, count = a.barrier.rsplit(":", 1)
        os.makedirs(folder, exist_ok=True)
        open(os.path.join(folder, str(os.getpid())), "w").close()
        while len(os.listdir(folder)) < int(count):
            time.sleep(0.001)
    trace("start", T_START_EPOCH)
    trace("ready", time.time())
    t_train = time.perf_counter()
    gpu_ms, reserved = [], 0.0
    cpu_ms = a.cpu_ms
    calib_last = min(a.calib_steps, steps - 1)
    span = rows - b + 1
    for i in range(steps):
        t0 = time.perf_counter()
        e0 = time.time()
        center = dataset.mean(dim=0)                  # reads the whole dataset every step
        start = (i * a.accum * b) % span
        opt.zero_grad(set_to_none=True)
        for k in range(a.accum):                      # gradient accumulation: K micro-batches
            lo = (start + k * b) % span
            x = dataset[lo:lo + b] - center
            with torch.no_grad():
                y = (x @ teacher).argmax(dim=1)
            loss = cross_entropy(model(x), y)
            (loss / a.accum if a.accum > 1 else loss).backward()
        opt.step()
        sync()
        gpu_ms.append((time.perf_counter() - t0) * 1000)
        e1 = time.time()
        if i == 0 and device.type == "cuda":
            reserved = torch.cuda.memory_reserved(device) / GIB
        if i % a.log_every == 0 or i == steps - 1:
            print(f"step {i} loss {loss.item():.6f}", flush=True)
        if a.cpu_ms is not None:
            spend_cpu(cpu_ms / 1000, a.cpu_work)
        elif i == calib_last:
            timed = gpu_ms[1:] if len(gpu_ms) > 1 else gpu_ms
            frac = a.cpu_fraction
            cpu_ms = statistics.median(timed) * frac / (1 - frac)
            spend_cpu((i + 1) * cpu_ms / 1000, a.cpu_work)   # owed for steps 0..i
        elif i > calib_last:
            spend_cpu(cpu_ms / 1000, a.cpu_work)
        trace("gpu", i, e0, e1)
        trace("cpu", i, e1, time.time())
    sync()
    now = time.perf_counter()
    trace("done", time.time())
    print(f"done steps={steps} seconds={now - T_START:.3f} train_seconds={now - t_train:.3f} "
          f"reserved_gib={reserved:.3f} gpu_ms={statistics.median(gpu_ms):.1f} "
          f"cpu_ms={cpu_ms:.1f} device={device.type}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
