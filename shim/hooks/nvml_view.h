// NVML inside a job (nvidia-smi, pynvml, nvitop, torch.cuda.list_gpu_processes): NVML ignores
// CUDA_VISIBLE_DEVICES and counts every job's memory, so the shim answers the calls that
// depend on either from the job's point of view, as cuDeviceGetCount and cuMemGetInfo are:
//   - GPUs: inside a gshare job whose CUDA_VISIBLE_DEVICES lists GPU UUIDs (what gshare
//     sets), nvmlDeviceGetCount{,_v2} counts those GPUs, nvmlDeviceGetHandleByIndex{,_v2}
//     numbers them 0..n-1 in that order, and nvmlDeviceGetIndex answers that number
//     (NVML_ERROR_NOT_FOUND for a GPU of the machine the job does not see, reached by UUID
//     or PCI bus id);
//   - memory: under the swap and checkpoint engines, nvmlDeviceGetMemoryInfo{,_v2} reads
//     as if the job were alone on the GPU: total less what other jobs hold that cannot
//     move, used = the job's own memory (all its processes, resident or swapped out, a
//     context each), asked of the daemon (lease/memory_view.h). Without an answer the
//     driver's own numbers stand.
// Both routes reach these wrappers: a program linked with libnvidia-ml.so.1 binds the shim's
// exports first (LD_PRELOAD), and dlopen + dlsym (pynvml's ctypes) goes through the dlsym hook.
// Source of the ABI: nvml.h (CUDA 12/13), nvmlReturn_t, nvmlMemory_t, nvmlMemory_v2_t.
#pragma once

namespace gshare::shim {

// The shim's wrapper for NVML export `name`, or nullptr when it wraps no such name. `real` is
// what glibc's dlsym found for it in `handle` (never nullptr); it becomes the function the
// wrapper calls, and `handle` where the wrappers look up the NVML calls they need. No heap,
// no lock: safe where the dlsym hook must be.
void* NvmlWrapperFor(void* handle, const char* name, void* real);

}  // namespace gshare::shim
