// The fake machine's physical GPUs, as both fakes see them: the fake driver (libcuda.so.1) and
// the fake NVML (libnvidia-ml.so.1) compile this file each, so that they agree on the count
// and on every GPU's UUID. Pure functions of their arguments and the environment; any thread.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gs_cuda::fake {

constexpr int kMaxDevices = 64;    // physical GPUs at most (FAKE_CUDA_DEVICES is capped here)
constexpr size_t kUuidBytes = 16;  // CUuuid, nvml's binary UUID
// "GPU-" + 8-4-4-4-12 lowercase hex digits + NUL.
constexpr size_t kUuidTextBytes = 41;

// An unsigned decimal number from the environment; fallback when unset, empty or malformed.
uint64_t EnvNumber(const char* name, uint64_t fallback);

// FAKE_CUDA_DEVICES (default 1), capped at kMaxDevices.
int PhysicalGpuCount();

// The 16 UUID bytes of physical GPU index: "FAKEGPU-" followed by index as 8 hex digits.
void PhysicalGpuUuid(int index, unsigned char out[kUuidBytes]);

// The UUID bytes as text "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (lowercase), NUL-ended.
void FormatGpuUuid(const unsigned char bytes[kUuidBytes], char out[kUuidTextBytes]);

// The physical index (< count) whose UUID is bytes, or -1.
int PhysicalGpuOfUuid(const unsigned char bytes[kUuidBytes], int count);

// The physical index (< count) whose UUID text is text[0, len) (hex digits in either case),
// or -1 when the text is malformed or names no GPU.
int PhysicalGpuOfUuidText(const char* text, size_t len, int count);

}  // namespace gs_cuda::fake
