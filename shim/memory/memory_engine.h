// The memory engine of this process (docs/memory.md, "Engines") behind one interface: what
// serves its allocations, what cuMemGetInfo shows it, and what becomes of its memory when the
// lease client reports, takes a grant, gives the lease back, is asked to evict or to stage.
// The engine is chosen once, on first use (Engine()), from GSHARE_MEMORY and what the driver
// can do; every caller then asks the one engine instead of testing each engine's switch.
// Any thread; lock-free after the choice. The swap engine's own features (the application's
// VMM calls, legacy IPC) stay on SwapSpace, whose calls check that it runs.
#pragma once

#include <cstdint>

#include "driver/cuda_abi.h"
#include "gshare/protocol.h"

namespace gshare::shim {

using gs_cuda::CUdeviceptr;
using gs_cuda::CUresult;
using gs_cuda::CUstream;

// The engine asked for: GSHARE_MEMORY = swap (the default, also when unset or empty),
// managed, checkpoint or off; any other value is off. Read once; any thread.
proto::MemoryEngine RequestedMemoryEngine();

// The engine that runs when `requested` is asked for and the driver has virtual memory
// management (`vmm`: cuMemCreate and the rest, CUDA Driver API "Virtual Memory Management")
// and managed memory with cuMemPrefetchAsync_v2 (`managed`): swap needs VMM, managed needs
// both, checkpoint and off need nothing (the daemon checkpoints the process whole).
constexpr proto::MemoryEngine RunnableEngine(proto::MemoryEngine requested, bool vmm,
                                             bool managed) {
  switch (requested) {
    case proto::MemoryEngine::kSwap: return vmm ? requested : proto::MemoryEngine::kOff;
    case proto::MemoryEngine::kManaged:
      return vmm && managed ? requested : proto::MemoryEngine::kOff;
    case proto::MemoryEngine::kCheckpoint: return requested;
    default: return proto::MemoryEngine::kOff;
  }
}

// Each method's default is what no engine does (the `off` engine overrides nothing else); an
// engine overrides what it serves.
class MemoryEngine {
 public:
  // The engine that runs (kOff when none does: also when the one asked for cannot).
  virtual proto::MemoryEngine kind() const = 0;

  // --- The application's allocations (hooks/). Each returns false when the engine does not
  // serve the call: the driver then does, and its memory counts as fixed (cannot move).
  // Whether the engine serves the cuMemAlloc family at all (swap, managed).
  virtual bool ServesAllocations() const { return false; }
  // cuMemAlloc family on `device` (bytes > 0): the engine's result in *r.
  virtual bool Alloc(int, uint64_t, CUdeviceptr*, CUresult*) { return false; }
  // Stream-ordered allocation (cuMemAllocAsync, cuMemAllocFromPoolAsync): only the swap
  // engine serves it; its memory is usable at once, so any stream order is kept.
  virtual bool AllocAsync(int, uint64_t, CUdeviceptr*, CUresult*) { return false; }
  // cuMemFree_v2 / cuMemFreeAsync of the engine's memory.
  virtual bool Free(CUdeviceptr, CUresult*) { return false; }
  virtual bool FreeAsync(CUdeviceptr, CUstream, CUresult*) { return false; }
  // The driver freed `p` (cuMemFree_v2 succeeded): forget it if it was the engine's.
  virtual void DriverFreed(CUdeviceptr) {}
  // cuMemGetAddressRange_v2 of the engine's memory.
  virtual bool AddressRange(CUdeviceptr, CUdeviceptr*, size_t*) { return false; }
  // Whether `p` is managed memory (it has no legacy IPC handle).
  virtual bool OwnsManaged(CUdeviceptr) { return false; }
  // Bytes the engine serves on `device` (its allocations, resident or not).
  virtual uint64_t Allocated(int) { return 0; }
  // Whether other jobs' memory moves away when this process runs (swap, checkpoint): then
  // cuMemGetInfo and cuDeviceTotalMem show the GPU as if alone, and a driver allocation that
  // finds the GPU full waits for room instead of failing.
  virtual bool MovesOthers() const { return false; }

  // --- The lease client (lease/). Calls marked "lease thread" come from the lease client's
  // thread or its exit handler, with the device's gate closed and drained.
  // Fills the engine's part of a memory report on `device`: engine, allocated and resident
  // bytes (added to the fixed bytes already there), swap counters. Off leaves m alone.
  virtual void Report(int, proto::MemReportMsg*) {}
  // Whether a grant on `device` must bring memory back before the gate opens. Quick (called
  // under the lease lock).
  virtual bool WantsBack(int) { return false; }
  // What Back did: the bytes copied, the time it took (ns) and, of that time, how long it
  // waited for room that another job's memory held (ns).
  struct BackStats {
    uint64_t moved = 0;
    uint64_t ns = 0;
    uint64_t room_wait_ns = 0;
  };
  // Brings the memory of `device` back for a grant (lease thread), filling `*out`; false when
  // not all of it came back (the process cannot run: it gives the lease back and asks again).
  virtual bool Back(int, BackStats* out) {
    *out = {};
    return true;
  }
  // The process no longer runs on `device` (lease thread, after its contexts synchronized):
  // on kDropped memory that leaves with the lease leaves, on kExit memory nobody reads again
  // is released. Other reasons leave the memory where it is.
  virtual void Stopped(int, proto::ReleaseReason) {}
  // The daemon needs `bytes` of room on `device`, where the process does not run (lease thread).
  virtual void Evict(int, uint64_t) {}
  // Copy up to `bytes` of idle memory on `device` to the host ahead of an eviction (0: stop).
  virtual void Stage(int, uint64_t) {}
  // Pin `host_bytes` of host memory in advance (returns at once).
  virtual void Prepare(uint64_t) {}
  // Without a daemon the process runs on `device` as if alone: its memory comes back.
  virtual void RunAlone(int) {}
  // At exit, where the process holds no lease: releases its device memory on `device` without
  // copying it; the bytes released.
  virtual uint64_t DiscardAtExit(int) { return 0; }
  // Whether the engine is pinning host memory now (it holds up the process's driver calls).
  virtual bool Pinning() const { return false; }

 protected:
  constexpr MemoryEngine() = default;
  ~MemoryEngine() = default;
};

// The process's engine, chosen at the first call (racing first callers choose the same).
MemoryEngine& Engine();

}  // namespace gshare::shim
