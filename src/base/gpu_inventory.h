// The GPUs of this machine as job options name them (--gpu: an index or a UUID), and the
// check of such a name. CountGpus and CheckGpuSpec may be called from any thread (NVML is
// loaded and asked once per process, under a function-local static). Errors are one line.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace gshare {

// GPUs to place jobs on: `configured` ([queue] gpus) when positive, else the NVIDIA device
// nodes /dev/nvidia<N> (nvidiactl, nvidia-uvm and friends are not numbered); at least 1.
int CountGpus(int configured);

// The UUIDs NVML lists ("GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"), read once through
// dlopen("libnvidia-ml.so.1"); nullopt when NVML does not load or answer (no driver, CI).
const std::optional<std::vector<std::string>>& NvmlGpuUuids();

// Whether `spec` has the form of a GPU UUID: "GPU-" then 8-4-4-4-12 hex digits.
bool IsGpuUuidForm(const std::string& spec);

// Checks a --gpu value: empty (no GPU chosen), a decimal index in [0, gpu_count), or a
// well-formed UUID that `uuids` lists (any well-formed one when `uuids` is nullopt).
// gpu_count <= 0 checks an index's form only. Pure.
Status CheckGpuSpecAgainst(const std::string& spec, int gpu_count,
                           const std::optional<std::vector<std::string>>& uuids);

// CheckGpuSpecAgainst with NVML's list (NvmlGpuUuids).
Status CheckGpuSpec(const std::string& spec, int gpu_count);

}  // namespace gshare
