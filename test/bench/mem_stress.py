#!/usr/bin/env python3
"""Correctness stress for gshare's memory engines: many tensors whose content must survive every
swap out and in bit for bit.

    python3 test/bench/mem_stress.py --gib 3 --cycles 1000
    python3 test/bench/mem_stress.py --gib 3 --alloc-backend async --cycles 0 --stop-file /tmp/stop
    python3 test/bench/mem_stress.py --device cpu --gib 0.01 --cycles 20     # smoke test

Allocates --small tensors of 512 B..64 KiB (at most a quarter of --gib) plus tensors of 64 KiB..--max-tensor-gib (log-uniform
sizes, multiples of 512 B, seeded) until --gib in all, as int64, each filled from its own seeded
generator in chunks of 64 MiB. Then, every cycle:
  1. on the device, per tensor: the plain sum and a position-weighted sum (sums of 64-element
     rows times the row number), int64 arithmetic that wraps, so exact modulo 2^64 whatever the
     reduction order; one copy of all of them to the host, compared with the values predicted
     from the seeds and the cycle number;
  2. every --full-every cycles (default 1: every cycle; and after the last one) a bit-exact
     comparison: each chunk is generated again from its seed, shifted by the total added so far,
     and compared element by element on the device (~5 bytes of memory traffic per byte of
     data: ~6 ms for 3 GiB on an H100);
  3. a cycle-dependent constant is added to every element (data changes each cycle, predictably);
  4. sleep --gap-ms, so that the lease can move to another job.
Stops after --cycles cycles (0: no limit), when the file --stop-file exists, or at the first cycle
with a mismatch (its tensors are listed). Prints `cycle <i> ok` every --log-every cycles and
`done cycles=<n> mismatches=<m> ...`; exit 0 only with no mismatch (1 on a mismatch, 3 on an
error such as a CUDA fault, reported as `error ...` before the done line).

--alloc-backend async sets PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync before torch loads
(appended to a value already there); expandable sets expandable_segments:True (the caching
allocator then maps cuMemCreate handles into reserved address space itself); native leaves the
environment as it is. The `config` line shows the backend torch reports; the done line's
expandable=<n> counts the allocator's expandable segments. Memory used: --gib plus ~100 MiB of
scratch for the checks.
"""
import argparse
import os
import random
import sys
import time

GIB = 1 << 30
MIB = 1 << 20
CHUNK = 64 * MIB          # bytes generated (and checked bit-exactly) per seed
ROW = 64                  # int64 elements per row of the weighted sum (512 B)
MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gib", type=float, default=3.0, help="total size of the tensors in GiB (default 3)")
    p.add_argument("--max-tensor-gib", type=float, default=1.0, help="largest tensor (default 1 GiB)")
    p.add_argument("--small", type=int, default=1000, help="tensors of 512 B..64 KiB (default 1000)")
    p.add_argument("--cycles", type=int, default=1000, help="cycles to run, 0: until --stop-file (default 1000)")
    p.add_argument("--stop-file", help="stop after the cycle during which this file appears")
    p.add_argument("--gap-ms", type=float, default=20.0, help="sleep after each cycle (default 20)")
    p.add_argument("--full-every", type=int, default=1, help="bit-exact check every K cycles (default 1)")
    p.add_argument("--log-every", type=int, default=50, help="print `cycle <i> ok` every K cycles (default 50)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--alloc-backend", choices=["native", "async", "expandable"], default="native")
    p.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto")
    a = p.parse_args(argv)
    if a.gib <= 0 or a.max_tensor_gib <= 0 or a.small < 0 or a.cycles < 0:
        p.error("--gib and --max-tensor-gib must be > 0, --small and --cycles >= 0")
    if min(a.full_every, a.log_every) < 1 or a.gap_ms < 0:
        p.error("--full-every and --log-every must be >= 1, --gap-ms >= 0")
    return a


ARGS = parse_args()
_BACKEND_CONF = {"async": "backend:cudaMallocAsync", "expandable": "expandable_segments:True"}
if ARGS.alloc_backend in _BACKEND_CONF:
    # Read when torch's CUDA allocator initializes: must be in the environment before that.
    conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = (conf + "," if conf else "") + _BACKEND_CONF[ARGS.alloc_backend]

import torch  # noqa: E402


def signed(v):
    v &= MASK
    return v - (1 << 64) if v >> 63 else v


def tensor_sizes(a):
    """Sizes in bytes (multiples of 512), seeded: --small small ones, then larger ones to --gib."""
    rng = random.Random(a.seed)
    total = max(512, int(a.gib * GIB) // 512 * 512)
    big_max = max(512, min(int(a.max_tensor_gib * GIB), total // 3) // 512 * 512)
    sizes = []

    def log_uniform(lo, hi):
        if hi <= lo:
            return lo
        return int(2 ** rng.uniform(lo.bit_length() - 1, hi.bit_length() - 1)) // 512 * 512 or 512

    used = 0
    for _ in range(a.small):
        if used >= total // 4:           # small ones take at most a quarter of the total
            break
        sizes.append(log_uniform(512, 64 * 1024))
        used += sizes[-1]
    if used < total and total - used >= big_max:
        sizes.append(big_max)            # the largest size always occurs once
        used += big_max
    while used < total:
        s = min(log_uniform(64 * 1024, big_max), total - used)
        sizes.append(s)
        used += s
    rng.shuffle(sizes)                   # small and large interleaved in memory
    return sizes


class Stress:
    def __init__(self, a, device):
        self.a, self.device = a, device
        self.sizes = tensor_sizes(a)
        self.gen = torch.Generator(device=device)
        self.tensors = [torch.empty(s // 8, dtype=torch.int64, device=device) for s in self.sizes]
        for i, t in enumerate(self.tensors):
            for c, part in enumerate(t.split(CHUNK // 8)):
                part.random_(generator=self.seeded(i, c))
        max_rows = max(self.sizes) // 8 // ROW
        self.weights = torch.arange(1, max_rows + 1, dtype=torch.int64, device=device)
        self.scratch = torch.empty(CHUNK // 8, dtype=torch.int64, device=device)
        self.added = 0                        # total added to every element, mod 2^64
        self.sum1, self.sum2 = self.checksums()   # the truth right after generation
        self.sum1 = [v & MASK for v in self.sum1]
        self.sum2 = [v & MASK for v in self.sum2]

    def seeded(self, i, c):
        self.gen.manual_seed((self.a.seed * 1000003 + i) * 65537 + c)
        return self.gen

    def checksums(self):
        s1, s2 = [], []
        for t in self.tensors:
            rows = t.numel() // ROW
            s1.append(t.sum())
            s2.append((t.view(rows, ROW).sum(dim=1) * self.weights[:rows]).sum())
        both = torch.stack(s1 + s2).cpu().tolist()   # one copy, one synchronization
        n = len(self.tensors)
        return both[:n], both[n:]

    def full_check(self):
        """Indices of tensors whose content is not exactly the regenerated one plus self.added."""
        counts = []
        shift = signed(self.added)
        for i, t in enumerate(self.tensors):
            bad = None
            for c, part in enumerate(t.split(CHUNK // 8)):
                ref = self.scratch[:part.numel()]
                ref.random_(generator=self.seeded(i, c))
                ref.add_(shift)
                n = (ref != part).sum()
                bad = n if bad is None else bad + n
            counts.append(bad)
        counts = torch.stack(counts).cpu().tolist()
        return [(i, n) for i, n in enumerate(counts) if n]

    def mutate(self, cycle):
        delta = ((cycle + 1) * GOLDEN) & MASK
        d = signed(delta)
        for t in self.tensors:
            t.add_(d)
        for i, t in enumerate(self.tensors):
            n = t.numel()
            rows = n // ROW
            self.sum1[i] = (self.sum1[i] + n * delta) & MASK
            self.sum2[i] = (self.sum2[i] + ROW * delta * (rows * (rows + 1) // 2)) & MASK
        self.added = (self.added + delta) & MASK


def main():
    a = ARGS
    t_start = time.perf_counter()
    device = torch.device(("cuda" if torch.cuda.is_available() else "cpu") if a.device == "auto" else a.device)
    backend = "cpu"
    if device.type == "cuda":
        get = getattr(torch.cuda, "get_allocator_backend", None)
        torch.zeros(1, device=device)   # initializes the allocator
        backend = get() if get else "native"
    st = Stress(a, device)
    expandable = 0
    if device.type == "cuda" and backend == "native":
        expandable = sum(1 for seg in torch.cuda.memory_snapshot() if seg.get("is_expandable"))
    print(f"config device={device.type} backend={backend} tensors={len(st.sizes)} "
          f"bytes={sum(st.sizes)} smallest={min(st.sizes)} largest={max(st.sizes)} "
          f"cycles={a.cycles} gap_ms={a.gap_ms:g}", flush=True)
    cycle = mismatches = 0
    error = None
    try:
        while a.cycles == 0 or cycle < a.cycles:
            got1, got2 = st.checksums()
            bad = [i for i in range(len(st.sizes))
                   if (got1[i] & MASK) != st.sum1[i] or (got2[i] & MASK) != st.sum2[i]]
            for i in bad[:20]:
                print(f"cycle {cycle} MISMATCH tensor {i} bytes={st.sizes[i]} sum={got1[i] & MASK:#x} "
                      f"expected={st.sum1[i]:#x} wsum={got2[i] & MASK:#x} expected={st.sum2[i]:#x}",
                      flush=True)
            if not bad and (cycle % a.full_every == 0):
                bad = [i for i, n in st.full_check()]
                for i in bad[:20]:
                    print(f"cycle {cycle} MISMATCH tensor {i} bytes={st.sizes[i]}: content differs "
                          f"from the regenerated data (checksums agreed)", flush=True)
            if bad:
                mismatches = len(bad)
                break
            st.mutate(cycle)
            cycle += 1
            if cycle % a.log_every == 0:
                print(f"cycle {cycle} ok", flush=True)
            if a.stop_file and os.path.exists(a.stop_file):
                break
            if a.gap_ms:
                time.sleep(a.gap_ms / 1000)
        if not mismatches:
            got1, got2 = st.checksums()
            bad = {i for i in range(len(st.sizes))
                   if (got1[i] & MASK) != st.sum1[i] or (got2[i] & MASK) != st.sum2[i]}
            bad |= {i for i, n in st.full_check()}
            for i in sorted(bad)[:20]:
                print(f"final MISMATCH tensor {i} bytes={st.sizes[i]}", flush=True)
            mismatches = len(bad)
    except RuntimeError as e:   # CUDA errors (torch.cuda.CudaError, OutOfMemoryError) included
        error = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        print(f"error {error}", flush=True)
    print(f"done cycles={cycle} mismatches={mismatches} tensors={len(st.sizes)} "
          f"seconds={time.perf_counter() - t_start:.3f} backend={backend} expandable={expandable}"
          f"{' error=1' if error else ''} device={device.type}", flush=True)
    if error:
        return 3
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
