// What the rest of the fake asks of its virtual memory management (vmm.cc): whether bytes that
// an op touches are mapped and accessible, so that a copy into an unmapped range fails with
// CUDA_ERROR_ILLEGAL_ADDRESS instead of faulting the process, and the mapping that holds an
// address. Any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "driver/cuda_abi.h"

namespace gs_cuda::fake {

// Bytes an op reads, or writes when write is set.
struct MemRange {
  uintptr_t start = 0;
  size_t size = 0;
  bool write = false;
};

// CUDA_ERROR_ILLEGAL_ADDRESS when a range overlaps reserved address space (cuMemAddressReserve)
// without every byte being mapped with the access it needs (read, or read-write to write);
// ranges outside every reservation are not checked. Otherwise runs touch (when non-empty)
// while no mapping can change (cuMemUnmap/cuMemSetAccess wait for it) and returns CUDA_SUCCESS.
CUresult AccessRanges(const MemRange* ranges, size_t count, const std::function<void()>& touch);

// When p lies inside a cuMemMap mapping: its start and size, and true.
bool MappedRange(uintptr_t p, uintptr_t* base, size_t* size);

// The entry points' bodies (vmm_exports.cc has the C names), with the real driver's argument
// checks and errors (CUDA driver API, "Virtual Memory Management").
inline constexpr size_t kGranularity = 2u << 20;  // minimum and recommended
bool ValidProp(const CUmemAllocationProp* prop);
CUresult Create(CUmemGenericAllocationHandle* handle, size_t size, const CUmemAllocationProp* prop,
                unsigned long long flags);
CUresult Release(CUmemGenericAllocationHandle handle);
CUresult Reserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr);
CUresult AddressFree(CUdeviceptr ptr, size_t size);
CUresult Map(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
             unsigned long long flags);
CUresult Unmap(CUdeviceptr ptr, size_t size);
CUresult SetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count);
CUresult GetAccess(unsigned long long* flags, const CUmemLocation* location, CUdeviceptr ptr);
CUresult Retain(CUmemGenericAllocationHandle* handle, void* addr);
CUresult Properties(CUmemAllocationProp* prop, CUmemGenericAllocationHandle handle);
CUresult Export(void* shareable, CUmemGenericAllocationHandle handle,
                CUmemAllocationHandleType type, unsigned long long flags);
CUresult Import(CUmemGenericAllocationHandle* handle, void* shareable,
                CUmemAllocationHandleType type);

}  // namespace gs_cuda::fake
