// The bytes in use on each fake device, the counters behind cuMemGetInfo and out-of-memory.
// By default they are the process's own. With FAKE_CUDA_DEVICE_FILE they live in a file shared
// by every process that names it, so those processes share one capacity per device, as jobs on
// one GPU do. Any thread: the counters are lock-free atomics.
//
// File layout: kMaxDevices (64) little-endian uint64 counters, device i at offset 8*i, 512
// bytes in all. Created (zeroed) if missing, never shrunk. A process gives back what it still
// holds when it calls exit(); one that is killed or _exit()s leaks its bytes in the file.
#pragma once

#include <cstdint>

#include "driver/cuda_abi.h"

namespace gs_cuda::fake {

constexpr uint64_t kDeviceFileBytes = 64 * 8;

// Switches to the counters of the file at path (created if missing) when path is non-empty,
// and arranges for exit() to give back this process's remaining bytes. Call once, from cuInit,
// before any charge. False when the file cannot be opened, sized or mapped.
bool OpenDeviceUsage(const char* path);

// Adds bytes to device's counter when the sum stays <= capacity: CUDA_SUCCESS, else
// CUDA_ERROR_OUT_OF_MEMORY and nothing changes.
CUresult ChargeDevice(int device, uint64_t bytes, uint64_t capacity);

// Takes back bytes this process charged to device.
void UnchargeDevice(int device, uint64_t bytes);

// Checkpoint and restore of the whole process (checkpoint.cc): every byte it holds on every
// device is given back into held[] (kMaxDevices entries), or charged again from it. Recharge
// is all or nothing: CUDA_ERROR_OUT_OF_MEMORY when some device lacks room, nothing charged.
void TakeAllDeviceBytes(uint64_t* held);
CUresult RechargeAllDeviceBytes(const uint64_t* held, uint64_t capacity);

// The counter of device: this process's bytes, or every process's with a device file.
uint64_t DeviceUsedBytes(int device);

}  // namespace gs_cuda::fake
