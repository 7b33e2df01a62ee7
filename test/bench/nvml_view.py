"""What a job is told about its GPU, asked the ways programs ask (nvml_view.sh runs it).
  hold GIB SECONDS  allocate GIB GiB on the GPU, print "holding", sleep SECONDS;
  view GIB          allocate GIB GiB, then print one JSON line per source:
                    torch.cuda.mem_get_info (the CUDA driver), nvidia-smi's query (a program
                    of its own), NVML by ctypes (v1 and v2 memory structs, the GPU count) and
                    pynvml when it is installed. Sizes in bytes; nvidia-smi's in MiB."""
import ctypes
import json
import subprocess
import sys
import time

import torch


def alloc(gib):
    return torch.ones(int(gib * (1 << 30)) // 4, dtype=torch.float32, device="cuda")


class Mem(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


class MemV2(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("total", ctypes.c_ulonglong),
                ("reserved", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


def nvml_ctypes():
    lib = ctypes.CDLL("libnvidia-ml.so.1")
    assert lib.nvmlInit_v2() == 0
    count = ctypes.c_uint()
    assert lib.nvmlDeviceGetCount_v2(ctypes.byref(count)) == 0
    out = {"count": count.value, "gpus": []}
    for i in range(count.value):
        dev = ctypes.c_void_p()
        assert lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(dev)) == 0
        uuid = ctypes.create_string_buffer(96)
        lib.nvmlDeviceGetUUID(dev, uuid, 96)
        m, m2 = Mem(), MemV2()
        m2.version = ctypes.sizeof(MemV2) | 2 << 24
        r1 = lib.nvmlDeviceGetMemoryInfo(dev, ctypes.byref(m))
        r2 = lib.nvmlDeviceGetMemoryInfo_v2(dev, ctypes.byref(m2))
        out["gpus"].append({"uuid": uuid.value.decode(), "v1": [r1, m.total, m.used, m.free],
                            "v2": [r2, m2.total, m2.reserved, m2.used, m2.free]})
    return out


def pynvml_view():
    try:
        import pynvml
    except ImportError:
        return "not installed"
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(0)
    m = pynvml.nvmlDeviceGetMemoryInfo(h)
    return {"count": pynvml.nvmlDeviceGetCount(), "total": m.total, "used": m.used, "free": m.free}


def main():
    if sys.argv[1] == "hold":
        x = alloc(float(sys.argv[2]))
        torch.cuda.synchronize()
        print("holding", flush=True)
        time.sleep(float(sys.argv[3]))
        del x
        return
    x = alloc(float(sys.argv[2]))
    torch.cuda.synchronize()
    free, total = torch.cuda.mem_get_info()
    print(json.dumps({"source": "torch.cuda.mem_get_info", "total": total, "free": free}))
    smi = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid,memory.total,memory.used,"
                          "memory.free", "--format=csv,noheader,nounits"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(json.dumps({"source": "nvidia-smi", "rc": smi.returncode,
                      "lines": smi.stdout.strip().splitlines()}))
    print(json.dumps({"source": "nvml-ctypes", **nvml_ctypes()}))
    print(json.dumps({"source": "pynvml", "view": pynvml_view()}))
    del x


if __name__ == "__main__":
    main()
