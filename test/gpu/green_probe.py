#!/usr/bin/env python3
"""What a green context (CUDA driver API 6.22, "Green Contexts") gives a process that did not ask
for one: can kernels and tensors of the primary context run on a green context's stream, are
they held to its SMs, and does that hold for an MPS client.

    python3 test/gpu/green_probe.py --sms 66

Steps: PyTorch allocates in the primary context; the probe splits the device's SMs
(cuDevSmResourceSplitByCount, one group of at least --sms), makes a green context of that group
and a stream on it (cuGreenCtxStreamCreate), then
  1. runs PyTorch ops on that stream (torch.cuda.ExternalStream) over tensors of the primary
     context and compares them with the same ops on the default stream;
  2. orders a green-stream op after a default-stream op with cuEventRecord / cuStreamWaitEvent
     across the two contexts, and back;
  3. times a bf16 GEMM loop on each stream (the green one should take about total/--sms longer);
  4. times the event round trip a launch redirected to the green stream pays (record on the
     default stream, wait on the green one, launch, record there, wait on the default stream).

Output: one JSON line {"kind": "green_probe", "sm_total", "sm_green", "equal", "ordered",
"gemm_ms_full", "gemm_ms_green", "small_us_plain", "small_us_redirect", "mps_client",
"errors"}. Exit 0 when every step ran, 1 when one failed (the error is in "errors").
"""
import argparse
import ctypes
import json
import os
import sys
import time

CU_DEV_RESOURCE_TYPE_SM = 1
RES_BYTES = 1024  # larger than any CUdevResource the driver writes (144 bytes in CUDA 12/13)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sms", type=int, default=66)
    ap.add_argument("--n", type=int, default=8192)
    args = ap.parse_args()
    import torch

    out = {"kind": "green_probe", "errors": [],
           "mps_client": bool(os.environ.get("CUDA_MPS_PIPE_DIRECTORY"))}
    dev = torch.device("cuda", 0)
    torch.ones(1, device=dev)  # the primary context
    cu = ctypes.CDLL("libcuda.so.1")

    def call(name, *a):
        fn = getattr(cu, name)
        rc = fn(*a)
        if rc != 0:
            raise RuntimeError(f"{name} -> {rc}")

    res = ctypes.create_string_buffer(RES_BYTES)
    call("cuDeviceGetDevResource", ctypes.c_int(0), res, ctypes.c_int(CU_DEV_RESOURCE_TYPE_SM))
    sm_total = int.from_bytes(res.raw[96:100], "little")
    out["sm_total"] = sm_total
    group = ctypes.create_string_buffer(RES_BYTES)
    rest = ctypes.create_string_buffer(RES_BYTES)
    nb = ctypes.c_uint(1)
    call("cuDevSmResourceSplitByCount", group, ctypes.byref(nb), res, rest, ctypes.c_uint(0),
         ctypes.c_uint(args.sms))
    out["sm_green"] = int.from_bytes(group.raw[96:100], "little")
    desc = ctypes.c_void_p()
    call("cuDevResourceGenerateDesc", ctypes.byref(desc), group, ctypes.c_uint(1))
    green = ctypes.c_void_p()
    call("cuGreenCtxCreate", ctypes.byref(green), desc, ctypes.c_int(0), ctypes.c_uint(1))
    gstream = ctypes.c_void_p()
    call("cuGreenCtxStreamCreate", ctypes.byref(gstream), green, ctypes.c_uint(1), ctypes.c_int(0))
    gs = torch.cuda.ExternalStream(gstream.value, device=dev)
    main_stream = torch.cuda.current_stream(dev)

    torch.manual_seed(0)
    a = torch.randn(args.n, args.n, device=dev, dtype=torch.bfloat16)
    b = torch.randn(args.n, args.n, device=dev, dtype=torch.bfloat16)
    ref = (a @ b).float().sum().item()
    torch.cuda.synchronize()
    try:
        with torch.cuda.stream(gs):
            c = a @ b
            s = c.float().sum()
        gs.synchronize()
        out["equal"] = s.item() == ref
    except Exception as e:  # noqa: BLE001
        out["errors"].append(f"ops on the green stream: {e}")
        out["equal"] = False

    ev_main = ctypes.c_void_p()
    ev_green = ctypes.c_void_p()
    call("cuEventCreate", ctypes.byref(ev_main), ctypes.c_uint(2))  # CU_EVENT_DISABLE_TIMING
    call("cuEventCreate", ctypes.byref(ev_green), ctypes.c_uint(2))
    try:
        x = torch.zeros(args.n, args.n, device=dev, dtype=torch.bfloat16)
        for _ in range(20):  # a long chain on the default stream, then its last write
            x = x @ b * 0 + 1
        call("cuEventRecord", ev_main, ctypes.c_void_p(main_stream.cuda_stream))
        call("cuStreamWaitEvent", gstream, ev_main, ctypes.c_uint(0))
        with torch.cuda.stream(gs):
            y = x * 2
        call("cuEventRecord", ev_green, gstream)
        call("cuStreamWaitEvent", ctypes.c_void_p(main_stream.cuda_stream), ev_green,
             ctypes.c_uint(0))
        z = y + 1  # on the default stream, after the green op
        out["ordered"] = bool((z == 3).all().item())
    except Exception as e:  # noqa: BLE001
        out["errors"].append(f"ordering: {e}")
        out["ordered"] = False

    def gemm_ms(stream, reps=30):
        with torch.cuda.stream(stream):
            for _ in range(3):
                a @ b
            stream.synchronize()
            t = time.perf_counter()
            for _ in range(reps):
                a @ b
            stream.synchronize()
        return (time.perf_counter() - t) * 1e3 / reps

    out["gemm_ms_full"] = round(gemm_ms(main_stream), 3)
    out["gemm_ms_green"] = round(gemm_ms(gs), 3)

    small = torch.ones(256, device=dev)
    reps = 2000

    def plain():
        for _ in range(reps):
            small.add_(1)

    def redirect():
        for _ in range(reps):
            cu.cuEventRecord(ev_main, ctypes.c_void_p(main_stream.cuda_stream))
            cu.cuStreamWaitEvent(gstream, ev_main, 0)
            with torch.cuda.stream(gs):
                small.add_(1)
            cu.cuEventRecord(ev_green, gstream)
            cu.cuStreamWaitEvent(ctypes.c_void_p(main_stream.cuda_stream), ev_green, 0)

    for name, fn in (("small_us_plain", plain), ("small_us_redirect", redirect)):
        fn()
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        out[name] = round((time.perf_counter() - t) * 1e6 / reps, 2)
    print(json.dumps(out), flush=True)
    return 1 if out["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
