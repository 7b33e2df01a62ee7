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

}  // namespace gs_cuda::fake
