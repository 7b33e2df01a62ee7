// SwapSpace: the swap memory engine (`--memory swap`, docs/memory.md "How `swap` works"). Any
// thread; Evict/SwapIn/SetRunning are called by the lease client thread with the device's
// gate closed and drained (no submission of this process is in flight).
//
// It serves the process's cuMemAlloc family itself, from VMM memory (cuMemAddressReserve +
// cuMemCreate + cuMemMap) at addresses that never change, so its device memory can leave the
// GPU while another job runs and come back before this one runs again:
//  - an allocation of more than 1 MiB is a region of its own: reserved address space
//    rounded up to the VMM granularity (2 MiB) and backed by chunks of at most 64 MiB (the
//    unit of eviction; 2 MiB handles cost ~0.1 ms each per cycle: docs/memory.md, same
//    section);
//  - smaller ones are blocks of shim-owned 2 MiB slabs, one size class (512 B .. 1 MiB,
//    powers of two) per slab;
//  - eviction copies resident chunks into the pinned HostPool, then unmaps and releases
//    them; swap-in re-creates them at the same addresses, maps them and copies the data
//    back. A swap-in that fails rolls back the chunks of its unfinished batch and keeps
//    their host copies.
//  - memory the application maps itself (cuMemCreate + cuMemMap: PyTorch's expandable
//    segments, JAX) is a region too: the engine keeps the real handle behind a virtual id
//    (kAppHandleTag), maps it at an address of its own (the copies' source and target) and
//    at every address the application mapped it, and re-creates all of it at swap-in. A
//    handle exported (cuMemExportToShareableHandle) is resident for good and counts as
//    fixed memory (swap_app_vmm.cc).
// While the process does not run on a device (no lease, or not swapped in yet) new
// allocations there get address space only; their chunks are created at the next swap-in.
#pragma once

#include <atomic>
#include <cstdint>

#include "driver/context_registry.h"
#include "driver/cuda_abi.h"
#include "memory/accepted_props.h"
#include "memory/app_mappings.h"
#include "memory/deferred_frees.h"
#include "memory/engine_devices.h"
#include "memory/handle_ids.h"
#include "memory/host_pool.h"
#include "memory/region_table.h"
#include "memory/swap_records.h"
#include "mutex.h"

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
  uint64_t staged = 0;  // resident bytes with a current copy in host memory (Stage)
  uint64_t fresh = 0;   // of allocated, never backed yet: on neither the GPU nor the host
};

class SwapSpace {
 public:
  static SwapSpace& Get();

  // Whether this process uses the engine (memory_engine.h: Engine() is the swap engine).
  bool On();
  // Caps the pinned host pool at `bytes` (GSHARE_HOST_POOL_LIMIT); when the engine is chosen.
  void SetHostPoolLimit(uint64_t bytes);

  // cuMemAlloc_v2 on `device`: CUDA_SUCCESS, CUDA_ERROR_OUT_OF_MEMORY (the GPU stayed full
  // for longer than the engine waits for room), CUDA_ERROR_INVALID_VALUE (0 bytes).
  CUresult Alloc(int device, uint64_t bytes, CUdeviceptr* out) EXCLUDES(mu_);
  // cuMemFree_v2. False when `p` is not the engine's (pass it on to the driver). Waits for
  // the device as cuMemFree does.
  bool Free(CUdeviceptr p, CUresult* result) EXCLUDES(mu_);
  // cuMemFreeAsync: the memory is released once `stream` has reached this point.
  bool FreeAsync(CUdeviceptr p, CUstream stream, CUresult* result) EXCLUDES(mu_);
  // cuMemGetAddressRange_v2 for the engine's pointers.
  bool AddressRange(CUdeviceptr p, CUdeviceptr* base, size_t* size) EXCLUDES(mu_);

  // The process runs on `device` (true after a swap-in, or when ungated) or stopped.
  void SetRunning(int device, bool running);
  bool Running(int device) const { return running_[device].load(std::memory_order_acquire); }
  // Moves at least `bytes` (UINT64_MAX: all) of resident memory on `device` to host memory.
  // Returns the bytes moved; less when the host pool cannot grow.
  uint64_t Evict(int device, uint64_t bytes) EXCLUDES(mu_);
  // At exit: releases the device memory of every resident chunk on `device` without copying
  // it (the process reads none of it again); those chunks become fresh, so that a swap-in
  // after all re-creates them, without their data. Exported handles stay. Returns the bytes
  // released. Call with the device's gate closed and the process not running there.
  uint64_t Discard(int device) EXCLUDES(mu_);
  // Makes everything on `device` resident and, on success, marks the process running there
  // (under the engine's lock, so no allocation in between is left without memory). While the
  // GPU has no room for the next chunk it waits as long as the free memory grows, and gives
  // up `stall_ns` after its last growth (RoomWait). kNoRoom: it gave up waiting for room;
  // kFailed: a copy or mapping failed (its batch rolled back). Either way the chunks already
  // back stay back, host copies of the others stay, and a later call goes on from there.
  // `moved` gets the bytes copied back by this call; after kNoRoom, `need` (when not null)
  // what is still missing, and after any result the time the call waited for room.
  enum class SwapInResult { kDone, kNoRoom, kFailed };
  // What a swap-in stopped by kNoRoom still needs: `missing` bytes not resident on the
  // device, `shortfall` of them beyond the GPU's free memory then (at least the chunk that
  // found no room).
  // `room_wait_ns`: of the call's time, the nanoseconds its chunks waited for room (from
  // their first failed allocation until one succeeded or the wait gave up), set after any
  // result: memory another job held, not the copy's cost.
  struct RoomNeed {
    uint64_t missing = 0;
    uint64_t shortfall = 0;
    uint64_t room_wait_ns = 0;
  };
  SwapInResult SwapIn(int device, uint64_t* moved, int64_t stall_ns, RoomNeed* need = nullptr)
      EXCLUDES(mu_);
  // Pins host memory in advance (a background thread); returns at once. The driver call that
  // pins holds up the process's other driver calls (host_pool.h), so Pinning() is true
  // meanwhile and that time does not count toward an early release. The thread pins
  // kPrepareStepBytes at a time and has a memory report sent after each step.
  void Prepare(uint64_t host_bytes);
  static constexpr uint64_t kPrepareStepBytes = 4ull << 30;
  bool Pinning() const { return pool_.Registering(); }
  // Has the staging thread pin the shared host pool's blocks this process has not pinned yet
  // (HostPool::PinShared) while it is idle on `device`: called after an eviction, so that the
  // next evictions into blocks other processes populated do not pin them on the way. Nothing
  // with a pool of its own. Any thread, no lock held.
  void PinPoolLater(int device);
  // Stages at most `bytes` of the resident memory on `device` (0: stops staging): a
  // background thread copies chunks into the host pool while they stay on the GPU, one
  // batch (kBatchBytes) per hold of the engine's lock, at most kStageBytesPerSec, growing the
  // pool outside the lock. A staged chunk is evicted without a copy (Evict frees staged
  // chunks first). Only while the process does not run on `device`: the data cannot change
  // then (the gate is closed, the contexts synchronized); a swap-in drops every staged copy
  // of its device before the process runs there again, and staging stops. Returns at once;
  // a memory report follows each GiB staged and the end (docs/memory.md, "Idle memory is
  // staged").
  void Stage(int device, uint64_t bytes);
  // The copy engines move ~54 GB/s each way (docs/benchmarks.md, "Pinning host memory");
  // staging takes less than a third of that, so that a running job's own transfers keep
  // most of the link.
  static constexpr uint64_t kStageBytesPerSec = 16ull << 30;
  // How long an eviction into a full shared host pool waits without other processes giving
  // extents back (HostPool::TakeWaiting): the job coming in frees a 512 MiB batch's extents
  // every ~10-20 ms at the link's ~50 GB/s, so 300 ms without one means nobody is swapping in.
  static constexpr int64_t kHostRoomStallNs = 300'000'000;
  // Bytes of pinned host memory, and the ledger of `device`.
  uint64_t HostBytes() { return pool_.pinned(); }
  // The populated bytes of the host pool shared with the owner's other processes; 0 when the
  // pool is the process's own (host_pool.h).
  uint64_t SharedPoolBytes() { return pool_.shared_bytes(); }
  SwapStats Stats(int device) EXCLUDES(mu_);
  // Bytes of address space the engine backs on `device` (SwapStats::allocated), without
  // walking the regions: for cuMemGetInfo.
  uint64_t Allocated(int device) EXCLUDES(mu_);

  // --- Memory the application maps itself (swap_app_vmm.cc), CUDA Driver API section
  // "Virtual Memory Management". The App* calls mirror the driver's and return its errors.
  // Handles the engine gives out have the top bit set; the driver's never do (they are
  // addresses in user space).
  static constexpr CUmemGenericAllocationHandle kAppHandleTag = 1ull << 63;
  static bool IsAppHandle(CUmemGenericAllocationHandle h) { return (h & kAppHandleTag) != 0; }
  // cuMemCreate. False when the engine does not serve the request (not device memory, not
  // whole 2 MiB units, or larger than one host pool extent, 1 GiB): pass it to the driver.
  bool AppCreate(CUmemGenericAllocationHandle* handle, size_t size, const CUmemAllocationProp* prop,
                 unsigned long long flags, CUresult* result) EXCLUDES(mu_);
  // cuMemRelease, cuMemMap, cuMemGetAllocationPropertiesFromHandle of an engine handle.
  // False when `h` is not one (pass it to the driver).
  bool AppRelease(CUmemGenericAllocationHandle h, CUresult* result) EXCLUDES(mu_);
  bool AppMap(CUdeviceptr va, size_t size, size_t offset, CUmemGenericAllocationHandle h,
              unsigned long long flags, CUresult* result) EXCLUDES(mu_);
  bool AppProperties(CUmemAllocationProp* prop, CUmemGenericAllocationHandle h, CUresult* result)
      EXCLUDES(mu_);
  // cuMemUnmap, cuMemSetAccess, cuMemGetAccess, cuMemRetainAllocationHandle. False when no
  // mapping of an engine handle is involved (pass it to the driver).
  bool AppUnmap(CUdeviceptr va, size_t size, CUresult* result) EXCLUDES(mu_);
  bool AppSetAccess(CUdeviceptr va, size_t size, const CUmemAccessDesc* desc, size_t count,
                    CUresult* result) EXCLUDES(mu_);
  bool AppGetAccess(unsigned long long* flags, const CUmemLocation* location, CUdeviceptr va,
                    CUresult* result) EXCLUDES(mu_);
  bool AppRetain(CUmemGenericAllocationHandle* h, void* addr, CUresult* result) EXCLUDES(mu_);
  // Before cuMemExportToShareableHandle of an engine handle: makes it resident for good (it
  // is fixed memory from now on: another process may map it) and gives the driver's handle
  // to export in *real. False when `h` is not one.
  bool AppPin(CUmemGenericAllocationHandle h, CUmemGenericAllocationHandle* real, CUresult* result)
      EXCLUDES(mu_);

  // --- Legacy IPC of the engine's cuMemAlloc memory (swap_ipc.cc, ipc_wire.h).
  // cuIpcGetMemHandle of `p`: makes its region resident for good (fixed memory from now on:
  // another process maps it), publishes it to importers (IpcExports) and writes gshare's
  // handle to *handle. False when `p` is not the engine's (pass it to the driver). Else
  // *result: CUDA_SUCCESS; CUDA_ERROR_INVALID_VALUE for memory the application mapped itself
  // (no legacy handle for VMM memory, as with the driver); CUDA_ERROR_NOT_SUPPORTED when the
  // driver gave the engine's handles no file descriptor type, or cannot export; the
  // swap-in's errors.
  bool IpcPin(CUdeviceptr p, CUipcMemHandle_v1* handle, CUresult* result) EXCLUDES(mu_);

 private:
  // The engine's records (swap_records.h) and batches of copies (swap_space_internal.h).
  using Chunk = swap_internal::Chunk;
  using Region = swap_internal::Region;
  using AppHandle = swap_internal::AppHandle;
  struct Batch;      // chunk copies finished together
  struct BatchPipe;  // two batches in flight
  // A region of `bytes` on `device`, backed at once while the process runs there. `app`
  // (owned by the region from then on) makes it an application handle's: one chunk.
  CUresult NewRegionLocked(int device, uint64_t bytes, AppHandle* app, Region** out) REQUIRES(mu_);
  CUresult BackChunk(Region& r, Chunk& c) REQUIRES(mu_);
  // Unmaps and releases a mapped chunk (and the application's mappings of its handle).
  void UnbackLocked(Region& r, Chunk& c) REQUIRES(mu_);
  // Makes every chunk of r resident now, copying evicted data back (AppPin, IpcPin). A chunk
  // that finds the GPU full waits for room (up to kAllocWaitNs, mu_ given up meanwhile: r
  // must not be freed concurrently, which the driver leaves undefined too). Chunks made
  // resident before a failure stay so.
  CUresult ResidentLocked(Region& r) REQUIRES(mu_);
  // r (resident) is shared from now on: fixed memory, never evicted (Region::exported).
  void MarkExportedLocked(Region& r) REQUIRES(mu_);
  Region* AppRegionLocked(CUmemGenericAllocationHandle h) const REQUIRES(mu_);
  // The properties of the engine's own chunks on `device`: pinned device memory, with a
  // POSIX file descriptor type while the driver accepts it (legacy IPC exports need one).
  CUmemAllocationProp ChunkProp(int device) const REQUIRES(mu_);
  // Frees r once the application holds no reference.
  void ForgetAppLocked(Region* r) REQUIRES(mu_);
  // True: mu_ is taken and *first is maps_.First(va, size). False (mu_ not held) when there
  // is none, the process has no mapping of its own, or the engine is off.
  bool LockFirstMapping(CUdeviceptr va, uint64_t size, int* first) TRY_ACQUIRE(true, mu_);
  void FreeRegionLocked(Region* r) REQUIRES(mu_);
  CUresult SlabAllocLocked(int device, uint64_t bytes, CUdeviceptr* out) REQUIRES(mu_);
  void FreeBlockLocked(Region* r, CUdeviceptr p) REQUIRES(mu_);
  void ReapDeferredLocked(bool wait) REQUIRES(mu_);
  BatchPipe PipeOf(int device) REQUIRES(mu_);  // on devices_' stream and batch events
  static void* PrepareThread(void* self);
  static void* StageThread(void* self);
  // Copies one batch of `device`'s resident, unstaged chunks into free pool extents (no
  // growth), at most `limit` bytes. Returns the bytes staged; *pool_full when a chunk found
  // no free extent. Nothing when the process runs on `device`.
  uint64_t StageBatchLocked(int device, uint64_t limit, bool* pool_full) REQUIRES(mu_);
  // Gives back the host copies of `device`'s staged chunks (the process runs there next).
  void DropStagedLocked(int device) REQUIRES(mu_);

  // Held through evictions and swap-ins (seconds); driver calls are made under it.
  Mutex mu_;
  RegionTable regions_ GUARDED_BY(mu_);
  DeferredFrees deferred_ GUARDED_BY(mu_);
  std::atomic<bool> running_[kMaxDevices] = {};
  EngineDevices devices_ GUARDED_BY(mu_);  // contexts, copy streams, batch events
  // A device's context without mu_, for PrepareThread and StageThread (an eviction may hold
  // mu_ for seconds): it is set once, nullptr then the context, so a stale read finds none.
  CUcontext ContextUnlocked(int device) const NO_THREAD_SAFETY_ANALYSIS;
  SwapStats stats_[kMaxDevices] GUARDED_BY(mu_) = {};
  uint64_t allocated_[kMaxDevices] GUARDED_BY(mu_) = {};  // reserved bytes of the regions
  HandleIds<Region> app_ids_ GUARDED_BY(mu_);  // application handle id, less the tag -> region
  AcceptedProps app_props_ GUARDED_BY(mu_);
  // Whether the driver creates the engine's chunks with a POSIX file descriptor type: 0 not
  // known yet (the first chunk asks), 1 yes, 2 no (legacy IPC exports are refused).
  int shareable_chunks_ GUARDED_BY(mu_) = 0;
  AppMappings maps_ GUARDED_BY(mu_);  // its count is read without mu_ too: MapCountUnlocked
  // maps_.count() without mu_, so that processes that map nothing themselves pass
  // cuMemUnmap/cuMemSetAccess/... to the driver without taking mu_ (an eviction may hold it
  // for seconds). Written under mu_ only.
  int MapCountUnlocked() const NO_THREAD_SAFETY_ANALYSIS { return maps_.count(); }
  HostPool pool_;
};

}  // namespace gshare::shim
