// VmmDriver: the real driver entry points the memory engines call themselves: virtual
// memory management (CUDA Driver API, "Virtual Memory Management"), pinned host memory, a
// stream and asynchronous copies for moving chunks, and the un-virtualized memory queries.
// Resolved once, lazily, straight from libcuda (never through the shim's own wrappers).
// Any thread after Vmm() returned non-null.
#pragma once

#include <cstdint>

#include "driver/cuda_abi.h"

namespace gshare::shim {

using namespace gs_cuda;

struct VmmDriver {
  CUresult (*cuMemAddressReserve)(CUdeviceptr*, size_t, size_t, CUdeviceptr, unsigned long long);
  CUresult (*cuMemAddressFree)(CUdeviceptr, size_t);
  CUresult (*cuMemCreate)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*,
                          unsigned long long);
  CUresult (*cuMemRelease)(CUmemGenericAllocationHandle);
  CUresult (*cuMemMap)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                       unsigned long long);
  CUresult (*cuMemUnmap)(CUdeviceptr, size_t);
  CUresult (*cuMemSetAccess)(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t);
  CUresult (*cuMemGetAllocationGranularity)(size_t*, const CUmemAllocationProp*,
                                            CUmemAllocationGranularity_flags);
  CUresult (*cuMemHostAlloc)(void**, size_t, unsigned int);
  CUresult (*cuMemFreeHost)(void*);
  // Optional (nullptr when libcuda lacks it): pinning memory populated beforehand.
  CUresult (*cuMemHostRegister_v2)(void*, size_t, unsigned int);
  CUresult (*cuStreamCreate)(CUstream*, unsigned int);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuMemcpyDtoHAsync_v2)(void*, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemcpyHtoDAsync_v2)(CUdeviceptr, const void*, size_t, CUstream);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuMemGetInfo_v2)(size_t*, size_t*);
  CUresult (*cuDeviceTotalMem_v2)(size_t*, CUdevice);
  CUresult (*cuMemAlloc_v2)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree_v2)(CUdeviceptr);
  CUresult (*cuEventQuery)(CUevent);
  CUresult (*cuEventDestroy_v2)(CUevent);
  // Optional (nullptr when libcuda lacks them): legacy IPC of engine memory (ipc_wire.h).
  CUresult (*cuMemExportToShareableHandle)(void*, CUmemGenericAllocationHandle,
                                           CUmemAllocationHandleType, unsigned long long);
  CUresult (*cuMemImportFromShareableHandle)(CUmemGenericAllocationHandle*, void*,
                                             CUmemAllocationHandleType);
};

// The table, or nullptr when libcuda lacks any of it (then the swap engine is off).
const VmmDriver* Vmm();

// The real cuDeviceTotalMem of `device` in bytes, asked once per device; 0 when unknown.
uint64_t DeviceTotalBytes(int device);

// cuMemHostAlloc / cuMemHostRegister flag: the memory is pinned for every context (cuda.h
// CU_MEMHOSTALLOC_PORTABLE, CU_MEMHOSTREGISTER_PORTABLE: both 0x01).
inline constexpr unsigned int kHostAllocPortable = 0x01;
// cuStreamCreate flag: no implicit synchronization with the legacy stream.
inline constexpr unsigned int kStreamNonBlocking = 0x01;
// cuEventCreate flag: an event only for ordering, no timestamp (cuda.h CU_EVENT_DISABLE_TIMING).
inline constexpr unsigned int kEventDisableTiming = 0x02;

}  // namespace gshare::shim
