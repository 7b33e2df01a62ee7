// SwapSpace: the swap memory engine (DESIGN.md section 5, `--memory swap`). It serves the
// process's cuMemAlloc family itself, from VMM memory (cuMemAddressReserve + cuMemCreate +
// cuMemMap) at addresses that never change, so its device memory can leave the GPU while
// another job runs and come back before this one runs again:
//  - an allocation of more than 1 MiB is a region of its own: reserved address space
//    rounded up to the VMM granularity (2 MiB) and backed by chunks of at most 64 MiB (the
//    unit of eviction; 2 MiB handles cost ~90 us each per cycle, measured);
//  - smaller ones are blocks of shim-owned 2 MiB slabs, one size class (512 B .. 1 MiB,
//    powers of two) per slab;
//  - eviction copies resident chunks into the pinned HostPool, then unmaps and releases
//    them; swap-in re-creates them at the same addresses, maps them and copies the data
//    back. A swap-in that fails rolls back the chunks of its unfinished batch and keeps
//    their host copies.
// While the process does not run on a device (no lease, or not swapped in yet) new
// allocations there get address space only; their chunks are created at the next swap-in.
// Any thread; Evict/SwapIn/SetRunning are called by the lease client thread with the
// device's gate closed and drained (no submission of this process is in flight).
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>

#include "context_registry.h"
#include "cuda_abi.h"
#include "host_pool.h"

namespace gshare::shim {

using namespace gs_cuda;

struct SwapStats {
  uint64_t allocated = 0;  // bytes of address space backed (or to be backed) by the engine
  uint64_t resident = 0;   // of which is on the GPU
  uint64_t swaps_out = 0;  // evictions that moved memory to the host
  uint64_t swaps_in = 0;   // swap-ins that moved memory back
  uint64_t bytes_out = 0;
  uint64_t bytes_in = 0;
  uint64_t swap_ns = 0;
};

class SwapSpace {
 public:
  static SwapSpace& Get();

  // Whether this process uses the engine: GSHARE_MEMORY=swap (the default) and a driver
  // with VMM. Decided once.
  bool On();

  // cuMemAlloc_v2 on `device`: CUDA_SUCCESS, CUDA_ERROR_OUT_OF_MEMORY (the GPU stayed full
  // for longer than the engine waits for room), CUDA_ERROR_INVALID_VALUE (0 bytes).
  CUresult Alloc(int device, uint64_t bytes, CUdeviceptr* out);
  // cuMemFree_v2. False when `p` is not the engine's (pass it on to the driver). Waits for
  // the device as cuMemFree does.
  bool Free(CUdeviceptr p, CUresult* result);
  // cuMemFreeAsync: the memory is released once `stream` has reached this point.
  bool FreeAsync(CUdeviceptr p, CUstream stream, CUresult* result);
  // cuMemGetAddressRange_v2 for the engine's pointers.
  bool AddressRange(CUdeviceptr p, CUdeviceptr* base, size_t* size);

  // The process runs on `device` (true after a swap-in, or when ungated) or stopped.
  void SetRunning(int device, bool running);
  bool Running(int device) const { return running_[device].load(std::memory_order_acquire); }
  // Moves at least `bytes` (UINT64_MAX: all) of resident memory on `device` to host memory.
  // Returns the bytes moved; less when the host pool cannot grow.
  uint64_t Evict(int device, uint64_t bytes);
  // Makes everything on `device` resident and, on success, marks the process running there
  // (under the engine's lock, so no allocation in between is left without memory). False
  // after a failure (rolled back; call again later). `moved` gets the bytes copied back.
  bool SwapIn(int device, uint64_t* moved);
  // Pins host memory in advance (a background thread); returns at once.
  void Prepare(uint64_t host_bytes);
  // Bytes of pinned host memory, and the ledger of `device`.
  uint64_t HostBytes() { return pool_.pinned(); }
  SwapStats Stats(int device);
  // Bytes of address space the engine backs on `device` (SwapStats::allocated), without
  // walking the regions: for cuMemGetInfo.
  uint64_t Allocated(int device);

 private:
  struct Chunk;
  struct Region;
  struct Deferred;  // cuMemFreeAsync waiting for its stream
  struct Batch;     // chunk copies finished together
  Region* FindLocked(CUdeviceptr p) const;
  bool InsertLocked(Region* r);
  void RemoveLocked(Region* r);
  CUresult NewRegionLocked(int device, uint64_t bytes, Region** out);
  CUresult BackChunk(Region& r, Chunk& c);
  void FreeRegionLocked(Region* r);
  CUresult SlabAllocLocked(int device, uint64_t bytes, CUdeviceptr* out);
  // False (with one line on stderr) when `bytes` more can never fit on `device`, even with
  // every other job's movable memory evicted.
  bool CanEverFitLocked(int device, uint64_t bytes);
  void FreeBlockLocked(Region* r, CUdeviceptr p);
  void ReapDeferredLocked(bool wait);
  bool EnterContext(int device);
  void LeaveContext();
  CUstream StreamOf(int device);
  static void* PrepareThread(void* self);

  pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
  Region** regions_ = nullptr;  // sorted by base; GUARDED_BY(mu_)
  int count_ = 0;
  int capacity_ = 0;
  Deferred* deferred_ = nullptr;  // GUARDED_BY(mu_)
  std::atomic<bool> running_[kMaxDevices] = {};
  CUcontext ctx_[kMaxDevices] = {};    // the context the engine works in, per device
  CUstream stream_[kMaxDevices] = {};  // the engine's copy stream, per device
  SwapStats stats_[kMaxDevices] = {};  // GUARDED_BY(mu_)
  uint64_t allocated_[kMaxDevices] = {};  // reserved bytes of the regions; GUARDED_BY(mu_)
  HostPool pool_;
  std::atomic<int> state_{0};  // 0 unknown, 1 on, 2 off
};

}  // namespace gshare::shim
