// Device memory of the fake: host memory handed out as CUdeviceptr (so copies really move bytes),
// with a byte count per device so that cuMemGetInfo and out-of-memory behave like a GPU of
// FAKE_CUDA_MEM_BYTES. Also the byte counts of cuMemCreate storage (vmm.h). Any thread (one mutex).
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuda_abi.h"

namespace gs_cuda::fake {

// Allocates bytes (> 0) on device, 256-byte aligned. CUDA_ERROR_OUT_OF_MEMORY when the device
// would go past its size or the host has no memory; CUDA_ERROR_INVALID_VALUE for 0 bytes.
CUresult DeviceAlloc(int device, size_t bytes, CUdeviceptr* out);
// Frees an allocation of DeviceAlloc; CUDA_ERROR_INVALID_VALUE when p is not one.
CUresult DeviceFree(CUdeviceptr p);
// True when p is the start of a live DeviceAlloc allocation.
bool IsDeviceAlloc(CUdeviceptr p);

// Counts bytes (> 0) of other memory (cuMemCreate storage) against device:
// CUDA_ERROR_OUT_OF_MEMORY when it would go past the device's size. Uncharge gives them back.
CUresult Charge(int device, size_t bytes);
void Uncharge(int device, size_t bytes);

// Bytes allocated on device by DeviceAlloc and Charge.
uint64_t UsedBytes(int device);

}  // namespace gs_cuda::fake
