#!/usr/bin/env python3
"""The shape of a tensor-parallel LLM decode (vLLM with TP=2) at the driver level, for gshare's
multi-GPU checks (test/gpu/tp_share.sh): two ranks, one per GPU, each holding half of every MLP,
with one all-reduce per layer, over NCCL or over a custom all-reduce on legacy CUDA IPC.

    torchrun --standalone --nproc_per_node 2 test/gpu/tp_decode.py                  # NCCL
    torchrun --standalone --nproc_per_node 2 test/gpu/tp_decode.py --allreduce ipc  # CUDA IPC
    NCCL_CUMEM_ENABLE=0 torchrun --standalone --nproc_per_node 2 test/gpu/tp_decode.py --steps 50
    gshare run --gpus 2 -- torchrun --standalone --nproc_per_node 2 test/gpu/tp_decode.py

Each rank runs on cuda:LOCAL_RANK (torchrun's RANK, WORLD_SIZE, LOCAL_RANK; it needs torchrun)
with NVLink multicast off (NCCL_NVLS_ENABLE=0 unless set) and a fixed cuBLAS workspace
(CUBLAS_WORKSPACE_CONFIG=:4096:8 unless set). Process groups: NCCL (the default group) and a gloo
group for the CPU exchanges and barriers.

Model (Megatron-style MLP stack, bf16, everything from --seed): --layers layers of width --hidden
(H), FFN 4H split over the ranks: per layer a column-parallel W1 shard (H x 4H/world) and a
row-parallel W2 shard (4H/world x H), drawn on the device from a torch.Generator seeded from
(--seed, layer, rank); activations x (--batch x H) from a generator seeded from --seed alone, the
same on every rank (tensor parallelism replicates them). One decode step, for each layer:
    h = gelu(x @ W1); partial = h @ W2; y = ALLREDUCE(partial); x = x + y;
    x = x * rsqrt(mean(x^2) + 1e-6)                      (RMS norm over H, in fp32)
--extra-gib G makes each rank also hold G GiB of device memory (filled once, never read again),
to make the job bigger than the GPU's share.

All-reduce (--allreduce):
  nccl  dist.all_reduce(partial) on the NCCL group. NCCL_CUMEM_ENABLE / NCCL_CUMEM_HOST_ENABLE in
        the environment choose how NCCL allocates its buffers (cuMem* handles or cudaMalloc and
        legacy IPC); they are only reported here.
  ipc   vLLM's custom all-reduce transport (vllm/distributed/device_communicators/cuda_wrapper.py,
        custom_all_reduce.py): the libcudart PyTorch loaded, through ctypes; each rank
        cudaMallocs a buffer of 2 slots of batch x H bf16, exports it with cudaIpcGetMemHandle,
        the 64-byte handles go round on the gloo group, and each rank maps the others' buffers
        with cudaIpcOpenMemHandle(..., cudaIpcMemLazyEnablePeerAccess). An all-reduce writes
        `partial` into the rank's own slot (the call's parity), synchronizes, meets the others
        at a gloo barrier and sums every rank's slot in rank order (identical bits on every
        rank). The buffers are wrapped as tensors through __cuda_array_interface__ (int16, then
        viewed as bf16) on the rank's own device; where this PyTorch does not wrap a foreign
        pointer in place on that device (or has no NumPy to parse the interface) the slots are
        read with cudaMemcpyAsync instead ("ipc_access": "copy" in the JSON). A refused call
        ends every rank with one line naming it and its code, e.g.
        `ipc: cudaIpcGetMemHandle failed: 801 (cudaErrorNotSupported: operation not supported)
        on rank 0` (what a gshare shim that refuses legacy IPC of its memory engine's memory
        answers: docs/memory.md).

Checks: every rank must end with the same x (the digest below); a bare run and a run under gshare
of the same command must print the same digest (tp_share.sh compares them). bf16 GEMMs are
bit-reproducible for a fixed cuBLAS workspace on one GPU model, and with two ranks each element
of an all-reduce is one addition a + b, exact in either order, so the digest does not depend on
NCCL's algorithm or protocol.

Timing: --warmup steps (default 10) untimed, then --steps (default 200) timed, each followed by
torch.cuda.synchronize() and timed with time.perf_counter: the time per output token (TPOT) of
one decode step. Percentiles are nearest-rank, of rank 0's steps.

Digest: sha256 over the bytes of x after every 10th step (warm-up steps count) and after the last
step; its first 16 hex digits.

Output (stdout): `rank <r> digest <hex16>` from each rank in rank order, then from rank 0 one JSON
line {"mode", "world", "steps", "warmup", "batch", "hidden", "layers", "extra_gib", "digest" (rank
0's), "ranks_agree", "tpot_ms_p50", "tpot_ms_p99", "tpot_ms_max", "tpot_ms_mean", "seconds" (wall
since the process started, torch's import included), "nccl_cumem" and "nccl_cumem_host" (the
environment's NCCL_CUMEM_ENABLE, NCCL_CUMEM_HOST_ENABLE, "" when unset), "ipc_access" ("view",
"copy", null for nccl), "torch", "devices" (each rank's GPU UUID, rank order)} and `done`.
Progress on stderr. Exit: 0; 1 on any failure (the failing rank prints `tp_decode: rank <r>:
<error>` on stderr in one line and exits at once; torchrun then ends the others), also when the
ranks' digests differ; 2 on usage errors.

Cost (an estimate, not measured): ~1 GiB of weights a rank at the defaults (8 layers of 4096);
start-up (torchrun, two imports of torch, CUDA and NCCL set-up) ~15-30 s; a step reads each
rank's 1 GiB once (~0.3 ms on an H200) plus 8 all-reduces: ~1-2 ms with NCCL, ~2-4 ms with ipc
(a synchronize and a gloo barrier per layer), so 210 steps take about a second.
"""
import time

T_START = time.perf_counter()  # before importing torch: `seconds` covers import and CUDA init

import argparse  # noqa: E402
import ctypes  # noqa: E402
import ctypes.util  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")            # NVLink multicast stays off
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # reproducible cuBLAS

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn.functional as F  # noqa: E402

GIB = 1 << 30
HASH_EVERY = 10


class IpcError(RuntimeError):
    """A refused CUDA IPC call; its message is printed as it is."""


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--allreduce", choices=["nccl", "ipc"], default="nccl",
                   help="all-reduce transport (default nccl)")
    p.add_argument("--layers", type=int, default=8, help="MLP layers (default 8)")
    p.add_argument("--hidden", type=int, default=4096, help="width H; the FFN is 4H (default 4096)")
    p.add_argument("--batch", type=int, default=8, help="sequences decoded at once (default 8)")
    p.add_argument("--steps", type=int, default=200, help="timed decode steps (default 200)")
    p.add_argument("--warmup", type=int, default=10, help="untimed steps first (default 10)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--extra-gib", type=float, default=0.0,
                   help="further device memory each rank holds, in GiB (default 0)")
    a = p.parse_args(argv)
    if not 1 <= a.layers <= 10000 or min(a.hidden, a.batch, a.steps) < 1 or a.warmup < 0:
        p.error("--layers within 1..10000, --hidden, --batch, --steps >= 1, --warmup >= 0")
    if a.extra_gib < 0 or not math.isfinite(a.extra_gib):
        p.error("--extra-gib must be >= 0")
    return a


def seed_of(*parts):
    """A 63-bit seed from the parts (the same in every process, unlike hash())."""
    digest = hashlib.sha256(repr(parts).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def nearest_rank(sorted_values, q):
    """The q-quantile (0 < q <= 1) of sorted values, nearest-rank."""
    i = max(1, math.ceil(q * len(sorted_values)))
    return sorted_values[i - 1]


def tensor_bytes(t):
    """The bytes of a tensor, through a CPU copy (no NumPy needed)."""
    c = t.detach().contiguous().cpu()
    return ctypes.string_at(c.data_ptr(), c.numel() * c.element_size())


def device_uuid(device):
    u = str(torch.cuda.get_device_properties(device).uuid)
    return u if u.startswith("GPU-") else "GPU-" + u


def log(rank, msg):
    if rank == 0:
        print(f"tp_decode: {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Legacy CUDA IPC through the CUDA runtime PyTorch loaded (as vLLM's cuda_wrapper.py does it).

class CudaIpcMemHandle(ctypes.Structure):
    _fields_ = [("reserved", ctypes.c_byte * 64)]      # cudaIpcMemHandle_t: 64 opaque bytes


CUDA_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 1
CUDA_MEMCPY_DEVICE_TO_DEVICE = 3
CUDA_MEMCPY_DEFAULT = 4


def loaded_cudart_path():
    """The path of the libcudart this process has mapped (PyTorch's), or None."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                fields = line.split(None, 5)
                if len(fields) == 6:
                    path = fields[5].strip()
                    if path.startswith("/") and os.path.basename(path).startswith("libcudart"):
                        return path
    except OSError:
        pass
    return None


class CudaRuntime:
    def __init__(self):
        path = loaded_cudart_path() or ctypes.util.find_library("cudart")
        if not path:
            raise RuntimeError("ipc: no libcudart mapped in this process and none found by "
                               "ctypes.util.find_library")
        self.path = path
        lib = ctypes.CDLL(path)
        vp, sz, i, u = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_uint
        sigs = {
            "cudaSetDevice": [i],
            "cudaMalloc": [ctypes.POINTER(vp), sz],
            "cudaFree": [vp],
            "cudaIpcGetMemHandle": [ctypes.POINTER(CudaIpcMemHandle), vp],
            "cudaIpcOpenMemHandle": [ctypes.POINTER(vp), CudaIpcMemHandle, u],  # handle by value
            "cudaIpcCloseMemHandle": [vp],
            "cudaMemcpyAsync": [vp, vp, sz, i, vp],
        }
        for name, argtypes in sigs.items():
            fn = getattr(lib, name)
            fn.argtypes = argtypes
            fn.restype = ctypes.c_int
            setattr(self, name, fn)
        for name in ("cudaGetErrorName", "cudaGetErrorString"):
            fn = getattr(lib, name)
            fn.argtypes = [ctypes.c_int]
            fn.restype = ctypes.c_char_p
            setattr(self, name, fn)

    def describe(self, rc):
        try:
            name = (self.cudaGetErrorName(rc) or b"?").decode()
            text = (self.cudaGetErrorString(rc) or b"?").decode()
            return f"{rc} ({name}: {text})"
        except Exception:  # noqa: BLE001 - only a description
            return str(rc)


class _DeviceArray:
    """A raw device pointer as __cuda_array_interface__ (version 3). The interface has no bf16
    type string, so the slots are int16 and viewed as bf16 afterwards."""

    def __init__(self, ptr, shape):
        self.__cuda_array_interface__ = {"version": 3, "shape": tuple(shape), "typestr": "<i2",
                                         "data": (ptr, False), "strides": None, "stream": None}


def wrap_in_place(ptr, shape, device):
    """A bf16 tensor on `device` over the memory at `ptr`, or None when this PyTorch copies or
    places it on another device (older versions take the device from cudaPointerGetAttributes,
    the peer's for a mapped IPC buffer) or cannot read the interface (no NumPy)."""
    try:
        t = torch.as_tensor(_DeviceArray(ptr, shape), device=device)
    except Exception:  # noqa: BLE001 - any refusal means: read the slots by copy instead
        return None
    if t.device != device or t.data_ptr() != ptr or t.dtype != torch.int16:
        return None
    return t.view(torch.bfloat16)


class IpcAllReduce:
    """vLLM's custom all-reduce transport over legacy CUDA IPC, summing in rank order."""

    def __init__(self, rank, world, device, batch, hidden, gloo):
        self.rank, self.world, self.device, self.gloo = rank, world, device, gloo
        self.shape = (batch, hidden)
        self.slot_bytes = batch * hidden * 2                # bf16
        self.calls = 0
        self.rt = rt = CudaRuntime()
        rc = rt.cudaSetDevice(device.index)                 # torch.cuda.set_device did it too
        if rc:
            raise IpcError(f"ipc: cudaSetDevice failed: {rt.describe(rc)}")
        # Buffer and handle; every rank learns every rank's result before anyone goes on, so a
        # refusal on one rank ends all of them instead of leaving the others waiting.
        own = ctypes.c_void_p()
        handle = CudaIpcMemHandle()
        failed = None
        rc = rt.cudaMalloc(ctypes.byref(own), 2 * self.slot_bytes)
        if rc:
            failed = ("cudaMalloc", rc)
        else:
            rc = rt.cudaIpcGetMemHandle(ctypes.byref(handle), own)
            if rc:
                failed = ("cudaIpcGetMemHandle", rc)
        self.own_ptr = own.value or 0
        mine = (failed, bytes(handle))
        everyone = [None] * world
        dist.all_gather_object(everyone, mine, group=gloo)
        for r, (fail, _) in enumerate(everyone):
            if fail:
                raise IpcError(f"ipc: {fail[0]} failed: {rt.describe(fail[1])} on rank {r}")
        # Map the others' buffers (a process cannot open its own handle).
        self.ptrs = [0] * world
        self.ptrs[rank] = self.own_ptr
        self.opened = []
        failed = None
        for r in range(world):
            if r == rank:
                continue
            peer = ctypes.c_void_p()
            h = CudaIpcMemHandle.from_buffer_copy(everyone[r][1])
            rc = rt.cudaIpcOpenMemHandle(ctypes.byref(peer), h, CUDA_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)
            if rc:
                failed = ("cudaIpcOpenMemHandle", rc, r)
                break
            self.ptrs[r] = peer.value or 0
            self.opened.append(self.ptrs[r])
        results = [None] * world
        dist.all_gather_object(results, failed, group=gloo)
        for r, fail in enumerate(results):
            if fail:
                raise IpcError(f"ipc: {fail[0]} failed: {rt.describe(fail[1])} on rank {r} "
                               f"(the buffer of rank {fail[2]})")
        # views[r][s]: rank r's slot s as a bf16 tensor on this rank's device (the peers' buffers
        # are mapped into this process and addressable from its device), or None: copy instead.
        views = [[wrap_in_place(self.ptrs[r] + s * self.slot_bytes, self.shape, device)
                  for s in range(2)] for r in range(world)]
        self.views = views if all(v is not None for vs in views for v in vs) else None
        self.scratch = None
        if self.views is None:
            self.scratch = torch.empty((world,) + self.shape, dtype=torch.bfloat16, device=device)
        self.access = "view" if self.views is not None else "copy"

    def _memcpy(self, dst, src, kind):
        stream = torch.cuda.current_stream(self.device).cuda_stream
        rc = self.rt.cudaMemcpyAsync(dst, src, self.slot_bytes, kind, stream)
        if rc:
            raise IpcError(f"ipc: cudaMemcpyAsync failed: {self.rt.describe(rc)}")

    def __call__(self, partial):
        # Two slots and one barrier per call: a rank writes slot s for call k+2 only after the
        # barrier of call k+1, which every other rank reaches only after its synchronize in call
        # k+1, i.e. after its reads of call k (queued before that synchronize on the same stream)
        # have finished. So nobody overwrites a slot that someone still reads. With one slot a
        # fast rank could write call k+1's values while a slow one still reads call k's (the
        # reads are queued asynchronously after the barrier): that needs a second barrier.
        s = self.calls % 2
        self.calls += 1
        partial = partial.contiguous()
        if self.views is not None:
            self.views[self.rank][s].copy_(partial)
        else:
            self._memcpy(self.own_ptr + s * self.slot_bytes, partial.data_ptr(),
                         CUDA_MEMCPY_DEVICE_TO_DEVICE)
        torch.cuda.synchronize(self.device)               # our slot is written
        dist.barrier(group=self.gloo)                      # and everyone else's
        if self.views is not None:
            parts = [self.views[r][s] for r in range(self.world)]
        else:
            for r in range(self.world):
                self._memcpy(self.scratch[r].data_ptr(), self.ptrs[r] + s * self.slot_bytes,
                             CUDA_MEMCPY_DEFAULT)
            parts = [self.scratch[r] for r in range(self.world)]
        y = parts[0] + parts[1]                            # rank order: the same bits everywhere
        for t in parts[2:]:
            y = y + t
        return y

    def close(self):
        torch.cuda.synchronize(self.device)
        dist.barrier(group=self.gloo)                      # nobody reads a peer buffer any more
        self.views = None
        self.scratch = None
        for p in self.opened:
            rc = self.rt.cudaIpcCloseMemHandle(p)
            if rc:
                raise IpcError(f"ipc: cudaIpcCloseMemHandle failed: {self.rt.describe(rc)}")
        self.opened = []
        dist.barrier(group=self.gloo)                      # nobody maps our buffer any more
        if self.own_ptr:
            rc = self.rt.cudaFree(ctypes.c_void_p(self.own_ptr))
            self.own_ptr = 0
            if rc:
                raise IpcError(f"ipc: cudaFree failed: {self.rt.describe(rc)}")


# ---------------------------------------------------------------------------------------------

def make_weights(a, rank, world, device):
    """Each layer's W1 shard (H x 4H/world) and W2 shard (4H/world x H), bf16."""
    h, f = a.hidden, 4 * a.hidden // world
    g = torch.Generator(device=device)
    layers = []
    for i in range(a.layers):
        g.manual_seed(seed_of(a.seed, "w1", i, rank))
        w1 = torch.randn((h, f), generator=g, device=device).mul_(1 / math.sqrt(h)).to(torch.bfloat16)
        g.manual_seed(seed_of(a.seed, "w2", i, rank))
        w2 = torch.randn((f, h), generator=g, device=device).mul_(1 / math.sqrt(4 * h)).to(torch.bfloat16)
        layers.append((w1, w2))
    return layers


def run(a, rank, world, local_rank):
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    torch.cuda.init()
    dist.init_process_group("nccl", device_id=device)
    gloo = dist.new_group(backend="gloo")
    log(rank, f"config mode={a.allreduce} world={world} layers={a.layers} hidden={a.hidden} "
              f"batch={a.batch} steps={a.steps} warmup={a.warmup} extra_gib={a.extra_gib:g} "
              f"torch={torch.__version__}")
    if 4 * a.hidden % world:
        raise ValueError(f"4 x --hidden ({4 * a.hidden}) is not divisible by the world size {world}")

    extra = None
    if a.extra_gib > 0:
        extra = torch.empty(int(a.extra_gib * GIB), dtype=torch.uint8, device=device)
        extra.fill_(rank + 1)
    layers = make_weights(a, rank, world, device)
    g = torch.Generator(device=device)
    g.manual_seed(seed_of(a.seed, "x"))                    # the same x on every rank
    x = torch.randn((a.batch, a.hidden), generator=g, device=device).to(torch.bfloat16)

    ipc = None
    if a.allreduce == "ipc":
        if world < 2:
            raise ValueError("--allreduce ipc needs at least 2 ranks")
        ipc = IpcAllReduce(rank, world, device, a.batch, a.hidden, gloo)
        log(rank, f"ipc: {ipc.rt.path}, slots read by {ipc.access}")

        def allreduce(t):
            return ipc(t)
    else:
        def allreduce(t):
            dist.all_reduce(t)
            return t

    def step(x):
        for w1, w2 in layers:
            h = F.gelu(x @ w1)
            y = allreduce(h @ w2)
            x = x + y
            xf = x.float()
            x = (xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + 1e-6)).to(torch.bfloat16)
        return x

    digest = hashlib.sha256()
    torch.cuda.synchronize(device)
    dist.barrier(group=gloo)
    tpot = []
    total = a.warmup + a.steps
    for i in range(total):
        t0 = time.perf_counter()
        x = step(x)
        torch.cuda.synchronize(device)
        dt = time.perf_counter() - t0
        if i >= a.warmup:
            tpot.append(dt * 1000.0)
        if (i + 1) % HASH_EVERY == 0:                      # outside the timed span
            digest.update(tensor_bytes(x))
    digest.update(tensor_bytes(x))
    mine = digest.hexdigest()[:16]

    if ipc is not None:
        ipc.close()
    del extra
    digests = [None] * world
    dist.all_gather_object(digests, mine, group=gloo)
    uuids = [None] * world
    dist.all_gather_object(uuids, device_uuid(device), group=gloo)
    for r in range(world):                                 # the rank lines in rank order
        if r == rank:
            print(f"rank {rank} digest {mine}", flush=True)
        dist.barrier(group=gloo)
    agree = len(set(digests)) == 1
    if rank == 0:
        tp = sorted(tpot)
        result = {
            "mode": a.allreduce, "world": world, "steps": a.steps, "warmup": a.warmup,
            "batch": a.batch, "hidden": a.hidden, "layers": a.layers, "extra_gib": a.extra_gib,
            "digest": mine, "ranks_agree": agree,
            "tpot_ms_p50": round(nearest_rank(tp, 0.50), 4),
            "tpot_ms_p99": round(nearest_rank(tp, 0.99), 4),
            "tpot_ms_max": round(tp[-1], 4),
            "tpot_ms_mean": round(sum(tp) / len(tp), 4),
            "seconds": round(time.perf_counter() - T_START, 3),
            "nccl_cumem": os.environ.get("NCCL_CUMEM_ENABLE", ""),
            "nccl_cumem_host": os.environ.get("NCCL_CUMEM_HOST_ENABLE", ""),
            "ipc_access": ipc.access if ipc is not None else None,
            "torch": torch.__version__, "devices": uuids,
        }
        print(json.dumps(result), flush=True)
    dist.barrier(group=gloo)
    dist.destroy_process_group()
    if not agree:
        print(f"tp_decode: rank {rank}: the ranks' digests differ: {','.join(digests)}",
              file=sys.stderr, flush=True)
        return 1
    if rank == 0:
        print("done", flush=True)
    return 0


def main(argv=None):
    a = parse_args(argv)
    if "WORLD_SIZE" not in os.environ or "LOCAL_RANK" not in os.environ:
        print("tp_decode: run it under torchrun (RANK, WORLD_SIZE and LOCAL_RANK unset)",
              file=sys.stderr)
        return 2
    rank = int(os.environ.get("RANK", 0))
    world = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    try:
        return run(a, rank, world, local_rank)
    except Exception as e:  # noqa: BLE001 - one line, then out at once (no hang in teardown)
        text = " ".join(str(e).split())
        if not isinstance(e, IpcError):
            text = f"{type(e).__name__}: {text}"
        print(f"tp_decode: rank {rank}: {text}", file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(1)


if __name__ == "__main__":
    sys.exit(main())
