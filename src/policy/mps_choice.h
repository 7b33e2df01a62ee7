// Which jobs become clients of gshare's MPS server on their GPU, and as what (docs/design.md,
// "MPS backend"). MPS runs the kernels of its clients at once on the GPU's SMs, where the
// driver's time-slicing runs one context at a time (the fitting pair ran 1.19x the work per
// second of time-slicing on an H200: docs/benchmarks.md, "Sharing paths on the H200"). What it
// costs is isolation, so the rule keeps it where that cost stays within one user:
// - one MPS server per GPU serves one user at a time (nvidia-cuda-mps-control(1): a client of
//   another user waits until that server's clients have all ended, however long), so a job of
//   another user than the GPU's current clients' runs outside MPS, time-sliced beside them;
// - a fatal fault of a client is reported to every client of its server on that GPU (NVIDIA's
//   MPS documentation, "Troubleshooting"), which are then the same user's jobs; a job whose
//   environment sets GSHARE_MPS=0 asks for isolation and runs outside;
// - the driver refuses cuda-checkpoint's lock of an MPS client (CUDA_ERROR_NOT_SUPPORTED,
//   measured on an H200, driver 580), so checkpoint-engine jobs run outside; so do managed-engine
//   jobs, whose oversubscribed unified memory under MPS was not measured. The swap engine's
//   driver calls (cuMemCreate, cuMemMap, cuMemAddressReserve) work in a client;
// - a job of several GPUs runs outside (a process reaches one control daemon, and each GPU
//   has its own), as do Slurm's steps (Slurm's gres/mps may run an MPS of its own).
// Pure; any thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "base/batch_cap.h"
#include "model/job_record.h"

namespace gshare {

struct MpsJob {
  uid_t uid = 0;
  int priority = 0;
  int gpus = 1;                        // GPUs the job uses at once
  std::optional<MemoryEngine> memory;  // its memory engine; nullopt: unknown (the shim's default)
  JobKind kind = JobKind::kSubmit;
  bool isolation = false;  // GSHARE_MPS=0 in its environment (JobRecord::mps_isolation)
};

struct MpsGpu {
  bool server_up = false;           // its control daemon runs
  std::optional<uid_t> client_uid;  // the user whose jobs are its clients now; none: no client
  bool above_batch_client = false;  // a client above batch_max_priority runs there now
};

// When a batch client is held to batch_thread_percentage of the GPU's threads
// (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE; [mps] batch_cap). The driver reads the cap when the
// context is made, so it holds for the job's life, the service's idle time and its end
// included; the shim's SM partition (shim/lease/sm_partition.h) keeps SMs free for a busy
// service instead and gives them back when it idles, and a capped client cannot make one (the
// driver refused the split, CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, on an H200 with a 25 %
// cap). Measured there (docs/benchmarks.md, "The batch cap against the SM partition"): a
// training that started beside a service, capped at 25 %, ran 5.5 steps/s after the service had
// ended, against ~15 uncapped. The values and their names: base/batch_cap.h.

// Green contexts, which the SM partition is made of, came with the CUDA 12.4 driver API (CUDA
// driver API, "Green Contexts"); NVML's nvmlSystemGetCudaDriverVersion spells it 12040.
inline constexpr int kGreenContextsCudaVersion = 12040;

// The cap `configured` means on a driver of CUDA version `cuda_driver_version` (NVML's form;
// nullopt: unknown, no NVML): kAuto is kBesideService on a known driver older than
// kGreenContextsCudaVersion (no partition can be made: R535's CUDA 12.2, say), kNever
// otherwise; the others are themselves. Pure.
BatchCap ResolveBatchCap(BatchCap configured, std::optional<int> cuda_driver_version);

// A batch job (priority <= batch_max_priority) is a below-normal client (client priority
// orders the blocks waiting for SMs, not those already on them), capped as `cap` says.
struct MpsSettings {
  int batch_max_priority = 0;
  int batch_thread_percentage = 25;
  BatchCap cap = BatchCap::kNever;  // resolved (ResolveBatchCap): never kAuto here
};

struct MpsChoice {
  bool client = false;
  int client_priority = 0;             // CUDA_MPS_CLIENT_PRIORITY: 0 normal, 1 below normal
  int active_thread_percentage = 100;  // 100: no cap
  std::string why_not;                 // when not a client: why (for the log)
};

MpsChoice ChooseMps(const MpsJob& job, const MpsGpu& gpu, const MpsSettings& settings);

// A client's arrival: its process's first cuInit, where the driver reads the MPS variables
// (ChooseMps decided at launch, seconds before: an interpreter's imports, a model built on the
// CPU). A lower job arriving while a higher-priority client's memory leaves little free mostly
// waits for memory; as an MPS client that has launched work (its first allocations fit, its
// first kernels ran) it slowed the higher client's LLM decode step by 4-7 % the whole time it
// waited, where outside MPS, or as a client holding only a context, it did not (H200, driver
// 580: docs/benchmarks.md, "Item 3 against an idle client"). Outside, once room comes, it fills
// the higher client's gaps only (time-slicing beside the server).
struct MpsArrival {
  int priority = 0;                 // the arriving job's
  std::optional<int> top_priority;  // the highest priority of the server's other live clients
  uint64_t capacity_bytes = 0;      // the GPU's (the ledger's Capacity; 0: unknown)
  uint64_t free_bytes = 0;          // capacity less every process's need and unseen memory
};

// Why the arriving client stays outside MPS ("" : it joins): when a client of higher priority
// lives on its server and less than `join_free_percentage` % of the GPU's memory is free. 0
// turns the rule off; an unknown capacity joins. Pure; any thread.
std::string ChooseAtArrival(const MpsArrival& arrival, int join_free_percentage);

}  // namespace gshare
