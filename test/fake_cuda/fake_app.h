// What fake_app's files share: the driver functions it calls (one table, filled by the route),
// its options, and how a failed call ends the program. Main thread and the launch threads.
#pragma once

#include <string>

#include "fake_cuda_api.h"

namespace fake_app {

using namespace gs_cuda;

// X(field, export, per-thread export, name asked of cuGetProcAddress). The per-thread export
// is used under --per-thread on the linked and dlsym routes (what nvcc's
// --default-stream per-thread compiles to); gpa gets it from the flag instead.
#define FAKE_APP_FUNCTIONS(X)                                                                    \
  X(Init, cuInit, cuInit, "cuInit")                                                              \
  X(DeviceGet, cuDeviceGet, cuDeviceGet, "cuDeviceGet")                                          \
  X(DeviceGetUuid, cuDeviceGetUuid, cuDeviceGetUuid, "cuDeviceGetUuid")                          \
  X(PrimaryCtxRetain, cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain,                        \
    "cuDevicePrimaryCtxRetain")                                                                  \
  X(PrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2, cuDevicePrimaryCtxRelease_v2,               \
    "cuDevicePrimaryCtxRelease")                                                                 \
  X(CtxSetCurrent, cuCtxSetCurrent, cuCtxSetCurrent, "cuCtxSetCurrent")                          \
  X(CtxSynchronize, cuCtxSynchronize, cuCtxSynchronize, "cuCtxSynchronize")                      \
  X(CtxSynchronizeIn, cuCtxSynchronize_v2, cuCtxSynchronize_v2, "cuCtxSynchronize")              \
  X(ModuleLoadData, cuModuleLoadData, cuModuleLoadData, "cuModuleLoadData")                      \
  X(ModuleGetFunction, cuModuleGetFunction, cuModuleGetFunction, "cuModuleGetFunction")          \
  X(ModuleUnload, cuModuleUnload, cuModuleUnload, "cuModuleUnload")                              \
  X(StreamCreate, cuStreamCreate, cuStreamCreate, "cuStreamCreate")                              \
  X(StreamDestroy, cuStreamDestroy_v2, cuStreamDestroy_v2, "cuStreamDestroy")                    \
  X(StreamSynchronize, cuStreamSynchronize, cuStreamSynchronize_ptsz, "cuStreamSynchronize")     \
  X(LaunchKernel, cuLaunchKernel, cuLaunchKernel_ptsz, "cuLaunchKernel")                         \
  X(LaunchKernelEx, cuLaunchKernelEx, cuLaunchKernelEx_ptsz, "cuLaunchKernelEx")                 \
  X(BeginCapture, cuStreamBeginCapture_v2, cuStreamBeginCapture_v2_ptsz, "cuStreamBeginCapture") \
  X(EndCapture, cuStreamEndCapture, cuStreamEndCapture_ptsz, "cuStreamEndCapture")               \
  X(GraphInstantiate, cuGraphInstantiateWithFlags, cuGraphInstantiateWithFlags,                  \
    "cuGraphInstantiateWithFlags")                                                               \
  X(GraphLaunch, cuGraphLaunch, cuGraphLaunch_ptsz, "cuGraphLaunch")                             \
  X(GraphExecDestroy, cuGraphExecDestroy, cuGraphExecDestroy, "cuGraphExecDestroy")              \
  X(GraphDestroy, cuGraphDestroy, cuGraphDestroy, "cuGraphDestroy")                              \
  X(MemAlloc, cuMemAlloc_v2, cuMemAlloc_v2, "cuMemAlloc")                                        \
  X(MemFree, cuMemFree_v2, cuMemFree_v2, "cuMemFree")                                            \
  X(MemcpyHtoD, cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds, "cuMemcpyHtoD")                           \
  X(MemcpyDtoH, cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds, "cuMemcpyDtoH")                           \
  X(MemGetGranularity, cuMemGetAllocationGranularity, cuMemGetAllocationGranularity,             \
    "cuMemGetAllocationGranularity")                                                             \
  X(MemAddressReserve, cuMemAddressReserve, cuMemAddressReserve, "cuMemAddressReserve")          \
  X(MemAddressFree, cuMemAddressFree, cuMemAddressFree, "cuMemAddressFree")                      \
  X(MemCreate, cuMemCreate, cuMemCreate, "cuMemCreate")                                          \
  X(MemRelease, cuMemRelease, cuMemRelease, "cuMemRelease")                                      \
  X(MemMap, cuMemMap, cuMemMap, "cuMemMap")                                                      \
  X(MemUnmap, cuMemUnmap, cuMemUnmap, "cuMemUnmap")                                              \
  X(MemSetAccess, cuMemSetAccess, cuMemSetAccess, "cuMemSetAccess")                              \
  X(MemGetAccess, cuMemGetAccess, cuMemGetAccess, "cuMemGetAccess")                              \
  X(MemRetain, cuMemRetainAllocationHandle, cuMemRetainAllocationHandle,                         \
    "cuMemRetainAllocationHandle")                                                               \
  X(MemGetProps, cuMemGetAllocationPropertiesFromHandle, cuMemGetAllocationPropertiesFromHandle, \
    "cuMemGetAllocationPropertiesFromHandle")                                                    \
  X(MemExport, cuMemExportToShareableHandle, cuMemExportToShareableHandle,                       \
    "cuMemExportToShareableHandle")                                                              \
  X(MemAllocAsync, cuMemAllocAsync, cuMemAllocAsync_ptsz, "cuMemAllocAsync")                     \
  X(MemFreeAsync, cuMemFreeAsync, cuMemFreeAsync_ptsz, "cuMemFreeAsync")                         \
  X(MemsetD8Async, cuMemsetD8Async, cuMemsetD8Async_ptsz, "cuMemsetD8Async")                     \
  X(MemcpyDtoHAsync, cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz, "cuMemcpyDtoHAsync")       \
  X(MemGetInfo, cuMemGetInfo_v2, cuMemGetInfo_v2, "cuMemGetInfo")                                \
  X(MemAllocPitch, cuMemAllocPitch_v2, cuMemAllocPitch_v2, "cuMemAllocPitch")                    \
  X(MemcpyHtoDAsync, cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz, "cuMemcpyHtoDAsync")       \
  X(MemAllocFromPoolAsync, cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync_ptsz,                \
    "cuMemAllocFromPoolAsync")                                                                   \
  X(DeviceGetDefaultMemPool, cuDeviceGetDefaultMemPool, cuDeviceGetDefaultMemPool,               \
    "cuDeviceGetDefaultMemPool")                                                                 \
  X(IpcGetMemHandle, cuIpcGetMemHandle, cuIpcGetMemHandle, "cuIpcGetMemHandle")                  \
  X(IpcOpenMemHandle, cuIpcOpenMemHandle_v2, cuIpcOpenMemHandle_v2, "cuIpcOpenMemHandle")        \
  X(IpcCloseMemHandle, cuIpcCloseMemHandle, cuIpcCloseMemHandle, "cuIpcCloseMemHandle")          \
  X(EventCreate, cuEventCreate, cuEventCreate, "cuEventCreate")                                  \
  X(EventRecord, cuEventRecord, cuEventRecord_ptsz, "cuEventRecord")                             \
  X(StreamWaitEvent, cuStreamWaitEvent, cuStreamWaitEvent_ptsz, "cuStreamWaitEvent")

struct Api {
#define FAKE_APP_FIELD(field, name, name_pt, query) decltype(&gs_cuda::name) field = nullptr;
  FAKE_APP_FUNCTIONS(FAKE_APP_FIELD)
#undef FAKE_APP_FIELD
};

struct Options {
  std::string route = "dlsym";
  int device = -1;  // --device: the ordinal to work on (-1: not given, ordinal 0)
  int gpa_version = 12000;
  bool per_thread = false;
  int kernels = 10;
  unsigned kernel_ms = 50;
  int long_every = 0;    // --long-every: see Usage
  unsigned long_ms = 0;  // --long-ms
  int gap_ms = 0;
  int backlog_after = -1;   // --backlog-after: see Usage
  int align_ms = 0;         // --align-ms: see Usage
  int align_offset_ms = 0;  // --align-offset-ms
  int sync_every = 1;
  int threads = 1;
  bool capture = false;
  bool memcpy_check = false;
  bool fork_child = false;
  bool null_stream = false;
  bool ex = false;
  bool consumer = false;  // --consumer: see Usage
  int exit_code = 0;
  int sleep_ms = 0;
  long long vmm_bytes = 0;    // --vmm: reserve, create, map, check, unmap/remap, free
  long long pool_bytes = 0;   // --pool: cuMemAllocAsync + memset + cuMemFreeAsync
  long long swap_bytes = 0;   // --swap-check: buffers of about this many bytes, checked
  int cycles = 3;             // --cycles: rounds of --swap-check
  int pieces = 2;             // --pieces: --swap-check's bulk in this many buffers
  bool leak_to_exit = false;  // --leak-to-exit: see Usage
  bool finalizing = false;    // --finalizing: see Usage
  bool ipc_export = false;    // --ipc-export: see Usage
  std::string ipc_serve;      // --ipc-serve DIR: see Usage
  std::string ipc_open;       // --ipc-open DIR: see Usage
  std::string start_file;     // --start-file PATH: see Usage
  std::string stop_file;      // --stop-file PATH: see Usage
  bool print_mps = false;     // --print-mps: see Usage
  bool catch_sigint = false;  // --catch-sigint: see Usage
};

// Prints "fake_app: error <what> <code>" on stderr and exits 1.
[[noreturn]] void Fail(const char* what, long code);

// Fails when the route could not give fn.
template <class F>
F Need(F fn, const char* name) {
  if (fn == nullptr) Fail(name, 500);
  return fn;
}

// Calls api.field and fails on any result but CUDA_SUCCESS.
#define CALL(field, ...)                                                   \
  do {                                                                     \
    CUresult fake_app_r = Need(api.field, "resolve-" #field)(__VA_ARGS__); \
    if (fake_app_r != CUDA_SUCCESS) Fail(#field, fake_app_r);              \
  } while (0)

// One kernel of `ms` (o.kernel_ms by default) on stream (cuLaunchKernelEx under --ex), on a
// grid of `grid` blocks (the driver ignores it; it tells kernels of different sizes apart).
void Launch(const Api& api, const Options& o, CUfunction f, CUstream stream, unsigned ms = 0,
            unsigned grid = 1);

void SleepMs(int ms);

// --swap-check (fake_app_swap.cc): buffers of about o.swap_bytes from every allocation export
// the swap engine serves, checked bit-exact over o.cycles rounds of kernel, check, change.
// Prints "fake_app: swap-check ok cycles=<C> bytes=<B>"; on a wrong byte prints
// "fake_app: swap-check mismatch cycle=<i> buffer=<k> offset=<o>" on stderr and exits 3.
void SwapCheck(const Api& api, const Options& o, CUfunction f, CUdevice dev);

// fake_app_memory.cc: a 4 KiB copy to the device and back (fails "memcpy-mismatch");
// three launches captured into a graph launched twice; --ipc-export: a legacy IPC handle of a
// cuMemAlloc allocation, its result printed ("fake_app: ipc export <rc>"); --vmm: o.vmm_bytes
// (rounded up to the granularity) mapped, filled, kernels run, unmapped and mapped again and
// checked ("fake_app: vmm ok <bytes>", or "vmm-mismatch"); --pool: o.pool_bytes allocated,
// set and read back on one stream ("fake_app: pool ok", or "pool-mismatch").
void MemcpyRoundTrip(const Api& api);
void CaptureAndReplay(const Api& api, const Options& o, CUfunction f);
void IpcExport(const Api& api);
void VmmRoundTrip(const Api& api, const Options& o, CUfunction f, CUdevice dev);
void PoolRoundTrip(const Api& api, const Options& o);

// --ipc-serve / --ipc-open (fake_app_ipc.cc): the two processes of a legacy IPC exchange.
void IpcServe(const Api& api, const std::string& dir);
void IpcOpen(const Api& api, const std::string& dir);

}  // namespace fake_app
