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

// The CUDA version the driver supports, as NVML gives it (nvmlSystemGetCudaDriverVersion_v2:
// 1000 * major + 10 * minor, e.g. 12040 for 12.4), read with NvmlGpuUuids' load; nullopt when
// NVML does not load or answer.
std::optional<int> NvmlCudaDriverVersion();

// Whether `spec` has the form of a GPU UUID: "GPU-" then 8-4-4-4-12 hex digits.
bool IsGpuUuidForm(const std::string& spec);

// Checks a --gpu value: empty (no GPU chosen), a decimal index in [0, gpu_count), or a
// well-formed UUID that `uuids` lists (any well-formed one when `uuids` is nullopt).
// gpu_count <= 0 checks an index's form only. Pure.
Status CheckGpuSpecAgainst(const std::string& spec, int gpu_count,
                           const std::optional<std::vector<std::string>>& uuids);

// The most GPUs one job may ask for (--gpus).
inline constexpr int kMaxJobGpus = 64;

// The entries of a --gpu list, split at commas ("0,2" -> {"0", "2"}; "" -> {}).
std::vector<std::string> SplitGpuList(const std::string& spec);

// Checks a job's GPU request: `count` GPUs (--gpus: 1..kMaxJobGpus, and at most gpu_count
// when that is positive) and `spec` (--gpu): empty (the queue places the job), or `count`
// distinct entries separated by commas, each one CheckGpuSpecAgainst accepts. Pure.
Status CheckGpuRequestAgainst(const std::string& spec, int count, int gpu_count,
                              const std::optional<std::vector<std::string>>& uuids);

// CheckGpuRequestAgainst with NVML's list, loaded only when a UUID is named.
Status CheckGpuRequest(const std::string& spec, int count, int gpu_count);

// The UUID of an entry of a --gpu list: itself when it is a UUID, else NVML's UUID of that
// index; "" when NVML does not list it (no driver, CI without the fake NVML).
std::string GpuUuidOf(const std::string& entry);

// The NVML index ("1") of a GPU named by index or UUID; the entry itself when NVML does not
// list it.
std::string GpuIndexOf(const std::string& entry);
// GpuIndexOf of each entry of a --gpu list: the GPUs a job names, as admission counts them.
std::string GpuIndexList(const std::string& spec);

// CUDA_VISIBLE_DEVICES for a job placed on `slots` (JobRecord::slot: entries of a --gpu list):
// each entry as its UUID where NVML lists it, so that the job's device 0..n-1 are exactly
// these GPUs whatever CUDA_DEVICE_ORDER says (CUDA's default order, fastest first, need not
// be nvidia-smi's); an entry NVML does not know stays as it is. Comma-separated.
std::string VisibleDevices(const std::string& slots);

// The 16 bytes of a UUID "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (either case), as CUDA's
// CUuuid and NVML spell the same GPU; false when `uuid` has not that form. Pure.
bool ParseGpuUuid(const std::string& uuid, unsigned char out[16]);

}  // namespace gshare
