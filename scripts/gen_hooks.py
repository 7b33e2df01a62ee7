#!/usr/bin/env python3
"""Generate shim/driver/hooks.def, the one list every shim table is built from.

Inputs (a CUDA toolkit, only needed when the list is regenerated, not to build):
  - the export names of libcuda (from the toolkit's stub library, `nm -D`),
  - the PFN_* typedefs of cudaTypedefs.h, which give each export's exact parameter list.

Rule for picking the typedef of export E (documented in cudaTypedefs.h by example):
  strip a _ptds/_ptsz suffix (same signature as the unsuffixed export), then strip a
  _vN suffix; of the typedefs PFN_<root>_v<ver> sorted by ver, the unsuffixed name takes
  the first, _v2 the second, _v3 the third (CUDA adds one typedef per ABI revision).

Usage: scripts/gen_hooks.py [CUDA_HOME] > shim/driver/hooks.def
"""
import re
import subprocess
import sys

CUDA = sys.argv[1] if len(sys.argv) > 1 else "/usr/local/cuda"

# Submission families: every export matching is gated on the lease (docs/design.md, "The shim").
GATED = re.compile(
    r"^cu(Launch|GraphLaunch|GraphUpload|Memcpy|Memset|StreamWriteValue|StreamWaitValue|"
    r"StreamBatchMemOp|MemPrefetch|MemDiscard)")

# Hooks that are not submissions but feed the shim's bookkeeping: (kind, export).
OTHER = [
    ("INIT", "cuInit"),
    ("PROCADDR", "cuGetProcAddress"),
    ("PROCADDR", "cuGetProcAddress_v2"),
    ("ALLOC", "cuMemAlloc_v2"),
    ("ALLOCPITCH", "cuMemAllocPitch_v2"),
    ("ALLOCMANAGED", "cuMemAllocManaged"),
    ("FREE", "cuMemFree_v2"),
    ("ALLOCASYNC", "cuMemAllocAsync"),
    ("ALLOCASYNC", "cuMemAllocAsync_ptsz"),
    ("ALLOCPOOL", "cuMemAllocFromPoolAsync"),
    ("ALLOCPOOL", "cuMemAllocFromPoolAsync_ptsz"),
    ("FREEASYNC", "cuMemFreeAsync"),
    ("FREEASYNC", "cuMemFreeAsync_ptsz"),
    ("MEMCREATE", "cuMemCreate"),
    ("MEMRELEASE", "cuMemRelease"),
    ("MEMMAP", "cuMemMap"),
    ("MEMUNMAP", "cuMemUnmap"),
    ("MEMSETACCESS", "cuMemSetAccess"),
    ("MEMGETACCESS", "cuMemGetAccess"),
    ("MEMRETAIN", "cuMemRetainAllocationHandle"),
    ("MEMPROPS", "cuMemGetAllocationPropertiesFromHandle"),
    ("MEMEXPORT", "cuMemExportToShareableHandle"),
    ("IPCEXPORT", "cuIpcGetMemHandle"),
    ("IPCOPEN", "cuIpcOpenMemHandle"),
    ("IPCOPEN", "cuIpcOpenMemHandle_v2"),
    ("IPCCLOSE", "cuIpcCloseMemHandle"),
    ("DRIVERALLOC", "cuStreamCreate"),
    ("DRIVERALLOC", "cuStreamCreateWithPriority"),
    ("DRIVERALLOC", "cuModuleLoadData"),
    ("DRIVERALLOC", "cuModuleLoadDataEx"),
    ("DRIVERALLOC", "cuModuleGetFunction"),
    ("DRIVERALLOC", "cuLibraryLoadData"),
    ("DRIVERALLOC", "cuLibraryGetModule"),
    ("DRIVERALLOC", "cuKernelGetFunction"),
    ("DRIVERALLOC", "cuGraphInstantiate"),
    ("DRIVERALLOC", "cuGraphInstantiate_v2"),
    ("DRIVERALLOC", "cuGraphInstantiateWithFlags"),
    ("CAPTURE_BEGIN", "cuStreamBeginCapture"),
    ("CAPTURE_BEGIN", "cuStreamBeginCapture_ptsz"),
    ("CAPTURE_BEGIN", "cuStreamBeginCapture_v2"),
    ("CAPTURE_BEGIN", "cuStreamBeginCapture_v2_ptsz"),
    ("CAPTURE_BEGIN", "cuStreamBeginCaptureToGraph"),
    ("CAPTURE_BEGIN", "cuStreamBeginCaptureToGraph_ptsz"),
    ("CAPTURE_END", "cuStreamEndCapture"),
    ("CAPTURE_END", "cuStreamEndCapture_ptsz"),
    ("CTXDESTROY", "cuCtxDestroy_v2"),
    ("MEMINFO", "cuMemGetInfo_v2"),
    ("TOTALMEM", "cuDeviceTotalMem_v2"),
    ("ADDRRANGE", "cuMemGetAddressRange_v2"),
    ("SYNC", "cuCtxSynchronize"),
    ("SYNC", "cuCtxSynchronize_v2"),  # CUDA 13: the runtime's cudaDeviceSynchronize
    ("SYNC", "cuStreamSynchronize"),
    ("SYNC", "cuStreamSynchronize_ptsz"),
    ("SYNC", "cuEventSynchronize"),
    ("QUERY", "cuStreamQuery"),
    ("QUERY", "cuStreamQuery_ptsz"),
    ("QUERY", "cuEventQuery"),
]


def exports():
    out = subprocess.run(["nm", "-D", "--defined-only", f"{CUDA}/lib64/stubs/libcuda.so"],
                         check=True, capture_output=True, text=True).stdout
    return sorted({line.split()[-1] for line in out.splitlines() if line.strip()})


def typedefs():
    text = open(f"{CUDA}/include/cudaTypedefs.h").read()
    pat = re.compile(r"typedef\s+CUresult\s+\(CUDAAPI\s+\*PFN_(\w+?)_v(\d+)(_ptds|_ptsz)?\)\s*\(([^;]*)\);")
    table = {}
    for m in pat.finditer(text):
        root, ver, suffix, params = m.group(1), int(m.group(2)), m.group(3), m.group(4)
        if suffix:
            continue  # a _ptds/_ptsz export has its base export's signature
        params = " ".join(params.split())
        table.setdefault(root, {})[ver] = params
    return table


def split_params(params):
    if params.strip() == "void":
        return [], []
    decls, names = [], []
    depth, cur = 0, ""
    for ch in params:
        if ch == "," and depth == 0:
            decls.append(cur.strip())
            cur = ""
            continue
        depth += ch in "([" 
        depth -= ch in ")]"
        cur += ch
    decls.append(cur.strip())
    for d in decls:
        m = re.search(r"(\w+)\s*(\[\s*\])?$", d)
        names.append(m.group(1))
    return decls, names


def resolve(export, table):
    base = re.sub(r"_(ptds|ptsz)$", "", export)
    m = re.match(r"^(\w+?)(?:_v(\d+))?$", base)
    root, rev = m.group(1), int(m.group(2) or 1)
    vers = sorted(table.get(root, {}))
    if not vers:
        return None
    ver = vers[min(rev, len(vers)) - 1]
    return f"PFN_{root}_v{ver}", table[root][ver]


def main():
    table = typedefs()
    names = exports()
    rows = [("GATE", e) for e in names if GATED.match(e)] + OTHER
    print("// Generated by scripts/gen_hooks.py from the CUDA toolkit's stub libcuda exports and")
    print("// cudaTypedefs.h. Do not edit by hand: regenerate. One row per exported driver symbol:")
    print("//   GS_HOOK(kind, name, pfn_typedef, (parameter declarations), (argument names))")
    print("// kind GATE = a submission gated on the GPU lease; other kinds feed the shim's bookkeeping.")
    for kind, e in rows:
        r = resolve(e, table)
        if r is None:
            sys.stderr.write(f"no typedef for {e}; skipped\n")
            continue
        pfn, params = r
        decls, args = split_params(params)
        print(f"GS_HOOK({kind}, {e}, {pfn}, ({', '.join(decls)}), ({', '.join(args)}))")


if __name__ == "__main__":
    main()
