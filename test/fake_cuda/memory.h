// Device memory of the fake: host memory handed out as CUdeviceptr (so copies really move bytes),
// counted per device (device_usage.h) so that cuMemGetInfo and out-of-memory behave like a GPU
// of FAKE_CUDA_MEM_BYTES, shared between processes with FAKE_CUDA_DEVICE_FILE. Also the counts
// of other device memory: cuMemCreate storage (vmm.cc) and contexts (FAKE_CUDA_CONTEXT_BYTES).
// Any thread (one mutex for the table of allocations).
#pragma once

#include <cstddef>
#include <cstdint>

#include "driver/cuda_abi.h"

namespace gs_cuda::fake {

// Allocates bytes (> 0) on device, 256-byte aligned. CUDA_ERROR_OUT_OF_MEMORY when the device
// would go past its size or the host has no memory; CUDA_ERROR_INVALID_VALUE for 0 bytes.
CUresult DeviceAlloc(int device, size_t bytes, CUdeviceptr* out);
// Frees an allocation of DeviceAlloc; CUDA_ERROR_INVALID_VALUE when p is not one.
CUresult DeviceFree(CUdeviceptr p);
// True when p is the start of a live DeviceAlloc allocation.
bool IsDeviceAlloc(CUdeviceptr p);
// When p lies inside a live DeviceAlloc allocation: its start and requested size, and true.
bool DeviceAllocRange(CUdeviceptr p, CUdeviceptr* base, size_t* size);

// device is an ordinal (driver.h); the counts are kept by its physical index.
// Counts bytes (> 0) of other memory against device: CUDA_ERROR_OUT_OF_MEMORY when it would go
// past the device's size (across processes with a device file). Uncharge gives them back.
CUresult Charge(int device, size_t bytes);
void Uncharge(int device, size_t bytes);

// Bytes in use on device: DeviceAlloc, Charge, and other processes' with a device file.
uint64_t UsedBytes(int device);

}  // namespace gs_cuda::fake
