// How many of the process's CUDA devices the application sees. The daemon starts a job that
// may move to another GPU with CUDA_VISIBLE_DEVICES naming every GPU (its own first), because
// the driver restores a process onto another GPU only when the process sees every GPU, and
// with GSHARE_DEVICE_COUNT=N so that the application sees only its first N (its own GPUs):
// cuDeviceGetCount answers at most N and cuDeviceGet refuses the ordinals past it, on every
// route (linked, dlsym, cuGetProcAddress). NVML and /dev are not hidden. Any thread.
#pragma once

namespace gshare::shim {

// GSHARE_DEVICE_COUNT, read once; 0 (the variable unset, empty or not a positive decimal
// below 1000) leaves the devices as the driver lists them.
int DeviceLimit();

}  // namespace gshare::shim
