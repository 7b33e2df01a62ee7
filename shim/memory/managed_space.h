// ManagedSpace: the managed memory engine (`--memory managed`, docs/memory.md "Engines"): the
// process's cuMemAlloc_v2 and cuMemAllocPitch_v2 become cuMemAllocManaged(CU_MEM_ATTACH_GLOBAL)
// and the shim moves all of it with the lease. Any thread; Prefetch is called by the lease
// client thread with the gate closed.
//
// The driver may page that memory in and out by itself; the shim prefetches all of it to the
// GPU when the lease is granted and to host memory when the lease is given back
// (cuMemPrefetchAsync_v2, CUDA Driver API "Unified Addressing"), so a job meets its working
// set resident instead of faulting it in: prefetches to the GPU run several times faster than
// faults, though back to the host several times slower than to the GPU (docs/memory.md,
// "Engines"). On a GPU shared with others, never let managed memory exceed the GPU's free
// memory: oversubscribed managed memory can stall the GPU.
#pragma once

#include <atomic>
#include <cstdint>

#include "driver/context_registry.h"
#include "driver/cuda_abi.h"
#include "mutex.h"

namespace gshare::shim {

using namespace gs_cuda;

class ManagedSpace {
 public:
  static ManagedSpace& Get();
  // Whether this process uses the engine (memory_engine.h: Engine() is the managed engine).
  bool On();
  // cuMemAllocManaged on `device`'s behalf; the driver's result.
  CUresult Alloc(int device, uint64_t bytes, CUdeviceptr* out) EXCLUDES(mu_);
  // Forgets `p` if it is the engine's (the caller then frees it with cuMemFree, which frees
  // managed memory too).
  void Forget(CUdeviceptr p) EXCLUDES(mu_);
  // Whether `p` lies in one of the engine's allocations.
  bool Owns(CUdeviceptr p) EXCLUDES(mu_);
  // Prefetches every allocation of `device` to it (to_gpu) or to host memory, waits, and
  // returns the bytes moved. Needs a context of the process on `device`.
  uint64_t Prefetch(int device, bool to_gpu, uint64_t* ns) EXCLUDES(mu_);
  uint64_t Allocated(int device) EXCLUDES(mu_);
  uint64_t Resident(int device) EXCLUDES(mu_);  // as of the last prefetch: all or nothing

 private:
  struct Range {
    CUdeviceptr ptr;
    uint64_t bytes;
    int device;
  };
  Mutex mu_;                                                    // held through a whole prefetch
  Range* ranges_ GUARDED_BY(mu_) PT_GUARDED_BY(mu_) = nullptr;  // unordered
  int count_ GUARDED_BY(mu_) = 0;
  int capacity_ GUARDED_BY(mu_) = 0;
  CUcontext ctx_[kMaxDevices] GUARDED_BY(mu_) = {};
  CUstream stream_[kMaxDevices] GUARDED_BY(mu_) = {};
  bool on_gpu_[kMaxDevices] GUARDED_BY(mu_) = {};
};

}  // namespace gshare::shim
