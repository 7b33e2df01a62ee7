// Every entry point the fake libcuda.so.1 exports, declared with the gs_cuda ABI types: the
// rows of shim/driver/hooks.def plus FAKE_CUDA_EXTRA_EXPORTS below (the calls a job needs around
// its submissions). Shared by the fake (which defines them) and fake_app (which calls them or
// takes their types). Declarations only: any thread.
#pragma once

#include "driver/cuda_abi.h"

namespace gs_cuda {

constexpr CUresult CUDA_ERROR_ILLEGAL_STATE = 401;  // capture begun twice, ended unbegun
constexpr CUresult CUDA_ERROR_NOT_PERMITTED = 800;
constexpr unsigned int CU_STREAM_CAPTURE_MODE_GLOBAL = 0;

// cuda.h names that cuda_abi.h lacks. In the fake's namespace, which hides rather than clashes
// with a definition that cuda_abi.h may gain.
namespace fake {
constexpr CUresult CUDA_ERROR_ILLEGAL_ADDRESS = 700;  // a fault on device memory
constexpr CUresult CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712;
constexpr CUresult CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713;
// cuMemHostAlloc flags; the fake accepts any mix of them.
constexpr unsigned int CU_MEMHOSTALLOC_PORTABLE = 0x01;
constexpr unsigned int CU_MEMHOSTALLOC_DEVICEMAP = 0x02;
constexpr unsigned int CU_MEMHOSTALLOC_WRITECOMBINED = 0x04;
}  // namespace fake

// cuMemPoolCreate's properties, laid out as cuda.h's CUmemPoolProps_v1 (only the fake needs it).
typedef struct CUmemPoolProps_st {
  CUmemAllocationType allocType;
  CUmemAllocationHandleType handleTypes;
  CUmemLocation location;
  void* win32SecurityAttributes;
  size_t maxSize;
  unsigned short usage;
  unsigned char reserved[54];
} CUmemPoolProps_v1;
typedef CUmemPoolProps_v1 CUmemPoolProps;
static_assert(sizeof(CUmemPoolProps) == 88, "cuda.h's CUmemPoolProps_v1 is 88 bytes");

// X(name, version that introduced it, (parameter declarations)). The version feeds the fake's
// cuGetProcAddress; a _ptsz row shares its base export's version there. A name may also be a
// row of hooks.def (which grows as the shim hooks more): the declarations agree, and the
// duplicate row of cuGetProcAddress's table answers nothing different.
#define FAKE_CUDA_EXTRA_EXPORTS(X)                                                                \
  X(cuInit, 2000, (unsigned int Flags))                                                           \
  X(cuDriverGetVersion, 2020, (int* driverVersion))                                               \
  X(cuGetErrorString, 6000, (CUresult error, const char** pStr))                                  \
  X(cuGetErrorName, 6000, (CUresult error, const char** pStr))                                    \
  X(cuDeviceGetCount, 2000, (int* count))                                                         \
  X(cuDeviceGet, 2000, (CUdevice * device, int ordinal))                                          \
  X(cuDeviceGetName, 2000, (char* name, int len, CUdevice dev))                                   \
  X(cuDeviceGetUuid, 9020, (CUuuid * uuid, CUdevice dev))                                         \
  X(cuDeviceGetUuid_v2, 11040, (CUuuid * uuid, CUdevice dev))                                     \
  X(cuDeviceTotalMem_v2, 3020, (size_t * bytes, CUdevice dev))                                    \
  X(cuDevicePrimaryCtxRetain, 7000, (CUcontext * pctx, CUdevice dev))                             \
  X(cuDevicePrimaryCtxRelease_v2, 11000, (CUdevice dev))                                          \
  X(cuCtxCreate_v2, 3020, (CUcontext * pctx, unsigned int flags, CUdevice dev))                   \
  X(cuCtxSetCurrent, 4000, (CUcontext ctx))                                                       \
  X(cuCtxGetCurrent, 4000, (CUcontext * pctx))                                                    \
  X(cuCtxPushCurrent_v2, 4000, (CUcontext ctx))                                                   \
  X(cuCtxPopCurrent_v2, 4000, (CUcontext * pctx))                                                 \
  X(cuCtxGetDevice, 2000, (CUdevice * device))                                                    \
  X(cuCtxSynchronize, 2000, ())                                                                   \
  X(cuStreamDestroy_v2, 4000, (CUstream hStream))                                                 \
  X(cuStreamSynchronize, 2000, (CUstream hStream))                                                \
  X(cuStreamSynchronize_ptsz, 7000, (CUstream hStream))                                           \
  X(cuStreamQuery, 2000, (CUstream hStream))                                                      \
  X(cuStreamQuery_ptsz, 7000, (CUstream hStream))                                                 \
  X(cuStreamWaitEvent, 2000, (CUstream hStream, CUevent hEvent, unsigned int Flags))              \
  X(cuStreamWaitEvent_ptsz, 7000, (CUstream hStream, CUevent hEvent, unsigned int Flags))         \
  X(cuStreamIsCapturing, 10000, (CUstream hStream, CUstreamCaptureStatus * captureStatus))        \
  X(cuStreamIsCapturing_ptsz, 10000, (CUstream hStream, CUstreamCaptureStatus * captureStatus))   \
  X(cuEventCreate, 2000, (CUevent * phEvent, unsigned int Flags))                                 \
  X(cuEventRecord, 2000, (CUevent hEvent, CUstream hStream))                                      \
  X(cuEventRecord_ptsz, 7000, (CUevent hEvent, CUstream hStream))                                 \
  X(cuEventQuery, 2000, (CUevent hEvent))                                                         \
  X(cuEventSynchronize, 2000, (CUevent hEvent))                                                   \
  X(cuEventDestroy_v2, 4000, (CUevent hEvent))                                                    \
  X(cuDeviceGetDevResource, 12040,                                                                \
    (CUdevice device, CUdevResource * resource, CUdevResourceType type))                          \
  X(cuDevSmResourceSplitByCount, 12040,                                                           \
    (CUdevResource * result, unsigned int* nbGroups, const CUdevResource* input,                  \
     CUdevResource* remaining, unsigned int useFlags, unsigned int minCount))                     \
  X(cuDevResourceGenerateDesc, 12040,                                                             \
    (CUdevResourceDesc * phDesc, CUdevResource * resources, unsigned int nbResources))            \
  X(cuGreenCtxCreate, 12040,                                                                      \
    (CUgreenCtx * phCtx, CUdevResourceDesc desc, CUdevice dev, unsigned int flags))               \
  X(cuGreenCtxStreamCreate, 12050,                                                                \
    (CUstream * phStream, CUgreenCtx greenCtx, unsigned int flags, int priority))                 \
  X(cuEventElapsedTime, 2000, (float* pMilliseconds, CUevent hStart, CUevent hEnd))               \
  X(cuEventElapsedTime_v2, 12080, (float* pMilliseconds, CUevent hStart, CUevent hEnd))           \
  X(cuModuleGetFunction, 2000, (CUfunction * hfunc, CUmodule hmod, const char* name))             \
  X(cuModuleUnload, 2000, (CUmodule hmod))                                                        \
  X(cuMemGetInfo_v2, 3020, (size_t * freeBytes, size_t * totalBytes))                             \
  X(cuMemAllocHost_v2, 3020, (void** pp, size_t bytesize))                                        \
  X(cuMemFreeHost, 2000, (void* p))                                                               \
  X(cuMemHostAlloc, 2020, (void** pp, size_t bytesize, unsigned int Flags))                       \
  X(cuMemHostRegister_v2, 6050, (void* p, size_t bytesize, unsigned int Flags))                   \
  X(cuMemHostUnregister, 4000, (void* p))                                                         \
  X(cuMemHostGetDevicePointer_v2, 3020, (CUdeviceptr_v2 * pdptr, void* p, unsigned int Flags))    \
  X(cuMemGetAddressRange_v2, 3020, (CUdeviceptr_v2 * pbase, size_t * psize, CUdeviceptr_v2 dptr)) \
  X(cuGraphCreate, 10000, (CUgraph * phGraph, unsigned int flags))                                \
  X(cuGraphExecDestroy, 10000, (CUgraphExec hGraphExec))                                          \
  X(cuGraphDestroy, 10000, (CUgraph hGraph))                                                      \
  X(cuMemGetAllocationGranularity, 10020,                                                         \
    (size_t * granularity, const CUmemAllocationProp* prop,                                       \
     CUmemAllocationGranularity_flags option))                                                    \
  X(cuMemAddressReserve, 10020,                                                                   \
    (CUdeviceptr * ptr, size_t size, size_t alignment, CUdeviceptr addr,                          \
     unsigned long long flags))                                                                   \
  X(cuMemAddressFree, 10020, (CUdeviceptr ptr, size_t size))                                      \
  X(cuMemMap, 10020,                                                                              \
    (CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,            \
     unsigned long long flags))                                                                   \
  X(cuMemUnmap, 10020, (CUdeviceptr ptr, size_t size))                                            \
  X(cuMemSetAccess, 10020,                                                                        \
    (CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count))                    \
  X(cuMemGetAccess, 10020,                                                                        \
    (unsigned long long* flags, const CUmemLocation* location, CUdeviceptr ptr))                  \
  X(cuMemRetainAllocationHandle, 11000, (CUmemGenericAllocationHandle * handle, void* addr))      \
  X(cuMemGetAllocationPropertiesFromHandle, 10020,                                                \
    (CUmemAllocationProp * prop, CUmemGenericAllocationHandle handle))                            \
  X(cuMemExportToShareableHandle, 10020,                                                          \
    (void* shareableHandle, CUmemGenericAllocationHandle handle,                                  \
     CUmemAllocationHandleType handleType, unsigned long long flags))                             \
  X(cuMemImportFromShareableHandle, 10020,                                                        \
    (CUmemGenericAllocationHandle * handle, void* osHandle,                                       \
     CUmemAllocationHandleType shHandleType))                                                     \
  X(cuDeviceGetDefaultMemPool, 11020, (CUmemoryPool * pool_out, CUdevice dev))                    \
  X(cuDeviceGetMemPool, 11020, (CUmemoryPool * pool, CUdevice dev))                               \
  X(cuDeviceSetMemPool, 11020, (CUdevice dev, CUmemoryPool pool))                                 \
  X(cuMemPoolCreate, 11020, (CUmemoryPool * pool, const CUmemPoolProps* poolProps))               \
  X(cuMemPoolDestroy, 11020, (CUmemoryPool pool))                                                 \
  X(cuMemPoolTrimTo, 11020, (CUmemoryPool pool, size_t minBytesToKeep))                           \
  X(cuMemPoolSetAttribute, 11020, (CUmemoryPool pool, CUmemPool_attribute attr, void* value))     \
  X(cuMemPoolGetAttribute, 11020, (CUmemoryPool pool, CUmemPool_attribute attr, void* value))     \
  X(cuCheckpointProcessGetState, 12080, (int pid, int* state))                                    \
  X(cuCheckpointProcessLock, 12080, (int pid, void* args))                                        \
  X(cuCheckpointProcessCheckpoint, 12080, (int pid, void* args))                                  \
  X(cuCheckpointProcessRestore, 12080, (int pid, void* args))                                     \
  X(cuCheckpointProcessUnlock, 12080, (int pid, void* args))

#ifdef FAKE_CUDA_BUILD
#define FAKE_CUDA_API __attribute__((visibility("default")))
#else
#define FAKE_CUDA_API
#endif

extern "C" {
#define GS_HOOK(kind, name, pfn, params, args) FAKE_CUDA_API CUresult name params noexcept;
#include "driver/hooks.def"
#undef GS_HOOK
#define FAKE_CUDA_DECLARE(name, version, params) FAKE_CUDA_API CUresult name params noexcept;
FAKE_CUDA_EXTRA_EXPORTS(FAKE_CUDA_DECLARE)
#undef FAKE_CUDA_DECLARE
}  // extern "C"

}  // namespace gs_cuda
