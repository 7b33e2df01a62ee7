#!/usr/bin/env python3
"""Train a small decoder-only transformer (GPT-style, written with torch.nn) on synthetic tokens.

A real, deterministic PyTorch training for gshare's demos: the same command prints exactly the
same losses bare and under `gshare run`, so any difference means gshare changed the job's work.

    python3 examples/train_gpt.py                     # H100 defaults: ~1 min of GPU work
    python3 examples/train_gpt.py --device cpu        # small run (--small is implied on CPU)
    gshare run -J gpt -- python3 examples/train_gpt.py --steps 200

Output: `step <i> loss <x.xxxxxx>` every --log-every steps (and at the last step), then
`done steps=<n> seconds=<wall since start> train_seconds=<first step..last step> device=<dev>`.

Model: token + position embedding, N pre-LayerNorm blocks of causal self-attention
(F.scaled_dot_product_attention) and a GELU MLP, a final LayerNorm, and a head tied to the token
embedding. Data: a pool of --pool batches generated once on the device with a seeded
torch.Generator: each next token follows a fixed random permutation of the previous one with
probability 3/4, else is uniform, so there is something to learn (loss falls from ln(vocab)).
"""
import time

T_START = time.perf_counter()  # before importing torch: `seconds=` covers import and CUDA init

import argparse
import math
import os
import sys

# cuBLAS picks a reduction order per workspace; a fixed workspace config makes it deterministic.
# It must be in the environment before torch (and so cuBLAS) is loaded.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from training import set_deterministic, train  # noqa: E402

# Defaults sized for an H100 in fp32 (TF32 off): ~63 M parameters, 16 K tokens per step,
# ~6.8 TFLOP per step; at an estimated 35-45 TFLOP/s fp32 that is ~0.15-0.2 s per step, so
# 400 steps ~ 60-80 s. Change them here (or with --steps / --batch / --width / --layers).
FULL = dict(steps=400, batch=32, seq=512, width=768, layers=8, heads=12, vocab=8192,
            log_every=10, pool=8)
SMALL = dict(steps=30, batch=8, seq=64, width=128, layers=2, heads=4, vocab=512,
             log_every=5, pool=2)   # CPU: a few seconds on 2 cores


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, help=f"training steps (default {FULL['steps']}, small {SMALL['steps']})")
    p.add_argument("--batch", type=int, help=f"sequences per step (default {FULL['batch']}, small {SMALL['batch']})")
    p.add_argument("--seq", type=int, help="sequence length")
    p.add_argument("--width", type=int, help="model width (d_model)")
    p.add_argument("--layers", type=int, help="transformer blocks")
    p.add_argument("--heads", type=int, help="attention heads (must divide --width)")
    p.add_argument("--vocab", type=int, help="vocabulary size")
    p.add_argument("--log-every", type=int, help="print the loss every K steps")
    p.add_argument("--pool", type=int, help="distinct batches generated up front, used in turn")
    p.add_argument("--lr", type=float, default=3e-4)
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
    if min(a.steps, a.batch, a.seq, a.width, a.layers, a.heads, a.log_every, a.pool) < 1 or a.vocab < 2:
        p.error("sizes must be >= 1 (--vocab >= 2)")
    if a.width % a.heads:
        p.error("--heads must divide --width")
    return a




def causal_attention(q, k, v):
    """Causal softmax attention: PyTorch's fused kernel where it exists (>= 2.0), else the same
    math written out (Debian 12 ships PyTorch 1.13, used by the CPU run of the demo)."""
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    t = q.shape[-2]
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    mask = torch.ones(t, t, dtype=torch.bool, device=q.device).tril()
    return scores.masked_fill(~mask, float("-inf")).softmax(dim=-1) @ v


class CausalSelfAttention(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = causal_attention(q, k, v)
        return self.proj(y.transpose(1, 2).reshape(b, t, c))


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(width)
        self.attn = CausalSelfAttention(width, heads)
        self.ln2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab, seq, width, layers, heads):
        super().__init__()
        self.tok = nn.Embedding(vocab, width)
        # Learned positions as a plain parameter sliced per call: its backward is a copy.
        self.pos = nn.Parameter(torch.zeros(seq, width))
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(width)
        for name, prm in self.named_parameters():
            if name.endswith("weight") and prm.dim() == 2:
                nn.init.normal_(prm, std=0.02)
            elif name.endswith("bias"):
                nn.init.zeros_(prm)
        nn.init.normal_(self.pos, std=0.01)
        for blk in self.blocks:   # GPT-2's scaled init of the residual projections
            for lin in (blk.attn.proj, blk.mlp[2]):
                nn.init.normal_(lin.weight, std=0.02 / math.sqrt(2 * layers))

    def forward(self, idx):
        x = self.tok(idx) + self.pos[: idx.shape[1]]
        for blk in self.blocks:
            x = blk(x)
        return F.linear(self.ln_f(x), self.tok.weight)   # head tied to the token embedding




def make_data(a, device):
    g = torch.Generator(device=device)
    g.manual_seed(a.seed + 1)
    n = a.pool * a.batch
    perm = torch.randperm(a.vocab, generator=g, device=device)
    tokens = torch.empty(n, a.seq + 1, dtype=torch.long, device=device)
    tokens[:, 0] = torch.randint(a.vocab, (n,), generator=g, device=device)
    follow = torch.rand(n, a.seq, generator=g, device=device) < 0.75
    noise = torch.randint(a.vocab, (n, a.seq), generator=g, device=device)
    for t in range(a.seq):   # once, before training: seq small kernels
        tokens[:, t + 1] = torch.where(follow[:, t], perm[tokens[:, t]], noise[:, t])
    tokens = tokens.view(a.pool, a.batch, a.seq + 1)
    return tokens[:, :, :-1].contiguous(), tokens[:, :, 1:].contiguous()


def main(argv=None):
    a = parse_args(argv)
    set_deterministic(a.seed)
    device = torch.device(a.device)

    model = GPT(a.vocab, a.seq, a.width, a.layers, a.heads).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0.1)
    inputs, targets = make_data(a, device)

    return train(model, opt, inputs, targets, a, device, T_START)


if __name__ == "__main__":
    sys.exit(main())
