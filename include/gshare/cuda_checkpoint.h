// The CUDA driver's process checkpoint API (CUDA 12.8+, cuda.h "CUDA_CHECKPOINT" group,
// https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__CHECKPOINT.html), declared with
// cuda.h's layouts so that gshare builds without the toolkit. One process (the caller) locks,
// checkpoints, restores and unlocks another (the target, by pid):
//   RUNNING --Lock--> LOCKED --Checkpoint--> CHECKPOINTED --Restore--> LOCKED --Unlock--> RUNNING
// Lock blocks the target's further CUDA calls and waits for its submitted work; Checkpoint
// copies its device memory into host memory the driver owns and releases the GPU (context
// included); Restore puts it back at the same addresses; Unlock lets the blocked calls go on.
// Used by the daemon's checkpoint helper (src/daemon/checkpoint/checkpoint_helper.h) and the
// fake driver.
#pragma once

#include <cstdint>

namespace gshare::cuda_checkpoint {

// CUprocessState (cuda.h).
enum ProcessState : int {
  kRunning = 0,
  kLocked = 1,
  kCheckpointed = 2,
  kFailed = 3,  // an uncorrectable error during checkpoint or restore
};

struct LockArgs {           // CUcheckpointLockArgs
  unsigned int timeout_ms;  // 0: no timeout
  unsigned int reserved0;
  uint64_t reserved1[7];
};
struct CheckpointArgs {  // CUcheckpointCheckpointArgs
  uint64_t reserved[8];
};
// CUcheckpointGpuPair (CUDA 12.9+): Restore puts what ran on the GPU with UUID old_uuid onto the
// GPU with UUID new_uuid. Each is a CUuuid (16 bytes, as cuDeviceGetUuid returns them).
struct GpuPair {
  unsigned char old_uuid[16];
  unsigned char new_uuid[16];
};
struct RestoreArgs {  // CUcheckpointRestoreArgs (gpuPairs null: the same GPUs)
  void* gpu_pairs;    // GpuPair[gpu_pairs_count]
  unsigned int gpu_pairs_count;
  char reserved[52 - sizeof(void*)];
  uint64_t reserved1;
};
struct UnlockArgs {  // CUcheckpointUnlockArgs
  uint64_t reserved[8];
};
static_assert(sizeof(LockArgs) == 64 && sizeof(CheckpointArgs) == 64 && sizeof(UnlockArgs) == 64 &&
              sizeof(RestoreArgs) == 64);
static_assert(sizeof(GpuPair) == 32);  // two 16-byte CUuuid

// CUresult values these calls return besides success (cuda.h).
inline constexpr int kErrorInvalidValue = 1;
inline constexpr int kErrorOutOfMemory = 2;
inline constexpr int kErrorNotInitialized = 3;
inline constexpr int kErrorIllegalState = 401;
inline constexpr int kErrorNotSupported = 801;
inline constexpr int kErrorTimeout = 909;

using GetStateFn = int (*)(int pid, ProcessState* state);
using LockFn = int (*)(int pid, LockArgs* args);
using CheckpointFn = int (*)(int pid, CheckpointArgs* args);
using RestoreFn = int (*)(int pid, RestoreArgs* args);
using UnlockFn = int (*)(int pid, UnlockArgs* args);

}  // namespace gshare::cuda_checkpoint
