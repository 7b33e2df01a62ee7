// Every entry point the fake libcuda.so.1 exports, declared with the gs_cuda ABI types: the
// rows of shim/hooks.def plus FAKE_CUDA_EXTRA_EXPORTS below (the calls a job needs around
// its submissions). Shared by the fake (which defines them) and fake_app (which calls them or
// takes their types). Declarations only: any thread.
#pragma once

#include "cuda_abi.h"

namespace gs_cuda {

constexpr CUresult CUDA_ERROR_ILLEGAL_STATE = 401;        // capture begun twice, ended unbegun
constexpr CUresult CUDA_ERROR_NOT_PERMITTED = 800;
constexpr unsigned int CU_STREAM_CAPTURE_MODE_GLOBAL = 0;

// X(name, version that introduced it, (parameter declarations)). The version feeds the fake's
// cuGetProcAddress; a _ptsz row shares its base export's version there.
#define FAKE_CUDA_EXTRA_EXPORTS(X)                                                              \
  X(cuInit, 2000, (unsigned int Flags))                                                         \
  X(cuDriverGetVersion, 2020, (int* driverVersion))                                             \
  X(cuGetErrorString, 6000, (CUresult error, const char** pStr))                                \
  X(cuGetErrorName, 6000, (CUresult error, const char** pStr))                                  \
  X(cuDeviceGetCount, 2000, (int* count))                                                       \
  X(cuDeviceGet, 2000, (CUdevice* device, int ordinal))                                         \
  X(cuDeviceGetName, 2000, (char* name, int len, CUdevice dev))                                 \
  X(cuDeviceGetUuid, 9020, (CUuuid* uuid, CUdevice dev))                                        \
  X(cuDeviceGetUuid_v2, 11040, (CUuuid* uuid, CUdevice dev))                                    \
  X(cuDeviceTotalMem_v2, 3020, (size_t* bytes, CUdevice dev))                                   \
  X(cuDevicePrimaryCtxRetain, 7000, (CUcontext* pctx, CUdevice dev))                            \
  X(cuDevicePrimaryCtxRelease_v2, 11000, (CUdevice dev))                                        \
  X(cuCtxCreate_v2, 3020, (CUcontext* pctx, unsigned int flags, CUdevice dev))                  \
  X(cuCtxSetCurrent, 4000, (CUcontext ctx))                                                     \
  X(cuCtxGetCurrent, 4000, (CUcontext* pctx))                                                   \
  X(cuCtxPushCurrent_v2, 4000, (CUcontext ctx))                                                 \
  X(cuCtxPopCurrent_v2, 4000, (CUcontext* pctx))                                                \
  X(cuCtxGetDevice, 2000, (CUdevice* device))                                                   \
  X(cuCtxSynchronize, 2000, ())                                                                 \
  X(cuStreamCreate, 2000, (CUstream* phStream, unsigned int Flags))                             \
  X(cuStreamCreateWithPriority, 5050, (CUstream* phStream, unsigned int flags, int priority))   \
  X(cuStreamDestroy_v2, 4000, (CUstream hStream))                                               \
  X(cuStreamSynchronize, 2000, (CUstream hStream))                                              \
  X(cuStreamSynchronize_ptsz, 7000, (CUstream hStream))                                         \
  X(cuStreamQuery, 2000, (CUstream hStream))                                                    \
  X(cuStreamQuery_ptsz, 7000, (CUstream hStream))                                               \
  X(cuStreamWaitEvent, 2000, (CUstream hStream, CUevent hEvent, unsigned int Flags))            \
  X(cuStreamWaitEvent_ptsz, 7000, (CUstream hStream, CUevent hEvent, unsigned int Flags))       \
  X(cuStreamIsCapturing, 10000, (CUstream hStream, CUstreamCaptureStatus * captureStatus))      \
  X(cuStreamIsCapturing_ptsz, 10000, (CUstream hStream, CUstreamCaptureStatus * captureStatus)) \
  X(cuEventCreate, 2000, (CUevent* phEvent, unsigned int Flags))                                \
  X(cuEventRecord, 2000, (CUevent hEvent, CUstream hStream))                                    \
  X(cuEventRecord_ptsz, 7000, (CUevent hEvent, CUstream hStream))                               \
  X(cuEventQuery, 2000, (CUevent hEvent))                                                       \
  X(cuEventSynchronize, 2000, (CUevent hEvent))                                                 \
  X(cuEventDestroy_v2, 4000, (CUevent hEvent))                                                  \
  X(cuModuleLoadData, 2000, (CUmodule* module, const void* image))                              \
  X(cuModuleGetFunction, 2000, (CUfunction* hfunc, CUmodule hmod, const char* name))            \
  X(cuModuleUnload, 2000, (CUmodule hmod))                                                      \
  X(cuMemGetInfo_v2, 3020, (size_t* freeBytes, size_t* totalBytes))                             \
  X(cuMemAllocHost_v2, 3020, (void** pp, size_t bytesize))                                      \
  X(cuMemFreeHost, 2000, (void* p))                                                             \
  X(cuGraphCreate, 10000, (CUgraph* phGraph, unsigned int flags))                               \
  X(cuGraphInstantiate, 10000,                                                                  \
    (CUgraphExec* phGraphExec, CUgraph hGraph, CUgraphNode* phErrorNode, char* logBuffer,       \
     size_t bufferSize))                                                                        \
  X(cuGraphInstantiate_v2, 11000,                                                               \
    (CUgraphExec* phGraphExec, CUgraph hGraph, CUgraphNode* phErrorNode, char* logBuffer,       \
     size_t bufferSize))                                                                        \
  X(cuGraphInstantiateWithFlags, 11040,                                                         \
    (CUgraphExec* phGraphExec, CUgraph hGraph, unsigned long long flags))                       \
  X(cuGraphExecDestroy, 10000, (CUgraphExec hGraphExec))                                        \
  X(cuGraphDestroy, 10000, (CUgraph hGraph))

#ifdef FAKE_CUDA_BUILD
#define FAKE_CUDA_API __attribute__((visibility("default")))
#else
#define FAKE_CUDA_API
#endif

extern "C" {
#define GS_HOOK(kind, name, pfn, params, args) FAKE_CUDA_API CUresult name params noexcept;
#include "hooks.def"
#undef GS_HOOK
#define FAKE_CUDA_DECLARE(name, version, params) FAKE_CUDA_API CUresult name params noexcept;
FAKE_CUDA_EXTRA_EXPORTS(FAKE_CUDA_DECLARE)
#undef FAKE_CUDA_DECLARE
}  // extern "C"

}  // namespace gs_cuda
