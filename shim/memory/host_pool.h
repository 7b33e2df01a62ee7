// HostPool: the pinned host memory that evicted device memory is copied into, handed out in
// 2 MiB extents (the VMM granularity), first fit. Any thread; callers must have a CUDA
// context current when the pool may grow. Pinning is the expensive part (cuMemHostAlloc
// ~0.5-0.7 s/GiB: docs/benchmarks.md, "Pinning host memory: what stalls the job"), so memory
// is pinned once, in blocks of 1 GiB, and reused for every later eviction until exit.
//
// A block is populated first, without the driver (mmap, transparent huge pages asked for,
// one write per page by kPopulateThreads threads), then pinned with cuMemHostRegister; while
// one block is pinned the next is populated, so a growing pool may hold one populated block
// (1 GiB of the process's memory) not pinned yet. Why (same section): cuMemHostAlloc blocks
// every other driver call of the process for its whole 0.48-0.66 s/GiB; populating takes
// 0.46-0.55 s/GiB and blocks none; registering the populated block blocks them for
// 0.04-0.07 s/GiB. Copies run at the same ~54 GB/s from either kind. Without
// cuMemHostRegister, cuMemHostAlloc is used.
//
// Shared: when the daemon hands out its user's shared pool (MemoryHost::SharedHostPool) at the
// pool's first growth, and GSHARE_HOST_POOL is not "process", the blocks are that pool's
// (SharedPool): populated once by whichever of the user's processes needs one first, pinned by
// each process that uses it (one cuMemHostRegister per block per process), its extents taken
// and given back across processes. pinned() is then the process's own extents, and
// shared_bytes() the pool's populated bytes.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>

#include "memory/shared_pool.h"
#include "mutex.h"

namespace gshare::shim {

class HostPool {
 public:
  static constexpr uint64_t kUnitBytes = 2ull << 20;
  static constexpr uint64_t kBlockBytes = 1ull << 30;

  // A contiguous extent of `bytes` (a multiple of kUnitBytes, at most kBlockBytes), growing
  // the pool by one block when none is free. nullptr when pinning fails or the pool would
  // pass its limit.
  void* Take(uint64_t bytes) EXCLUDES(mu_, grow_mu_);
  // Take; in a shared pool that is full, it also waits while other processes give extents
  // back (the free part of the pool reaches new highs), until `stall_ns` pass without that.
  // So an eviction into a full pool goes on as the job coming in swaps in, which frees the
  // host memory its data held (docs/memory.md, "Pinned host pool").
  void* TakeWaiting(uint64_t bytes, int64_t stall_ns) EXCLUDES(mu_, grow_mu_);
  // Take without growing the pool: nullptr when no free extent is large enough.
  void* TryTake(uint64_t bytes) EXCLUDES(mu_);
  // Returns an extent from Take() or TryTake().
  void Give(void* p, uint64_t bytes) EXCLUDES(mu_);
  // Pins blocks until the pool holds at least `bytes` (or its limit). Slow: call it from a
  // thread that nothing waits on. Returns the bytes pinned now.
  uint64_t Grow(uint64_t bytes) EXCLUDES(mu_, grow_mu_);
  // In a shared pool: pins in this process the populated blocks it has not pinned yet, one per
  // hold of the growth lock (an eviction that needs a block waits for one pinning at most).
  // Slow (a GiB costs 0.04-0.07 s of pinning, more without huge pages) and it holds up the
  // process's other driver calls meanwhile: call it while the process is idle (staging). A
  // context must be current. Nothing with a pool of its own.
  void PinShared() EXCLUDES(mu_, grow_mu_);
  // Upper bound of pinned bytes (0: none).
  void SetLimit(uint64_t bytes) EXCLUDES(mu_);
  // Pinned bytes of the process's own pool; in a shared pool, its own extents.
  uint64_t pinned() EXCLUDES(mu_);
  // Bytes the process can take without growing: pinned(), and in a shared pool also the free
  // extents of blocks it has pinned.
  uint64_t usable() EXCLUDES(mu_);
  // The shared pool's populated bytes; 0 when the pool is the process's own.
  uint64_t shared_bytes() {
    return shared_on_.load(std::memory_order_acquire) ? shared_.ReadyBytes() : 0;
  }
  // A driver call that pins is in progress: the process's other driver calls wait for it.
  bool Registering() const { return registering_.load(std::memory_order_relaxed); }

 private:
  static constexpr int kMaxBlocks = 4096;                          // 4 TiB
  static constexpr int kUnitsPerBlock = kBlockBytes / kUnitBytes;  // 512
  struct Block {
    char* base;
    uint64_t used[kUnitsPerBlock / 64];  // bit per unit
  };
  // Pins one more block. `more`: another is likely wanted next, so it is populated (into
  // spare_) while this one is pinned.
  bool AddBlock(bool more) REQUIRES(grow_mu_) EXCLUDES(mu_);
  static void* PopulatedBlock();         // kBlockBytes, 2 MiB aligned, touched; nullptr on failure
  static void* PopulateSpare(void*);     // PopulatedBlock() as a thread's start routine
  static void* TouchSlice(void* slice);  // writes one byte per page of a 1/kPopulateThreads
  // Threads that populate a block: with huge pages 4.9 GB/s by 1 thread, 14.6 by 4, 6.0 by 8;
  // without them 1.3 and 3.4 (docs/benchmarks.md, "Pinning host memory: what stalls the job").
  static constexpr int kPopulateThreads = 4;
  void* TakeLocked(uint64_t units) REQUIRES(mu_);
  // Writes one byte per page of [p, p + kBlockBytes) from kPopulateThreads threads.
  static void Populate(char* p);

  // The shared pool (header comment). Attached at most once, at the first growth of a pool
  // still empty; used only by the process that attached it (a forked child has its own pool).
  bool SharedHere() const {
    return shared_on_.load(std::memory_order_acquire) && shared_pid_ == getpid();
  }
  void MaybeAttach() REQUIRES(grow_mu_) EXCLUDES(mu_);
  void* TakeShared(uint64_t units) EXCLUDES(mu_, grow_mu_);
  // Pins block `b` of the shared pool in this process, once. False when pinning fails.
  bool RegisterShared(int b) REQUIRES(grow_mu_) EXCLUDES(mu_);
  // One more block of the shared pool this process can use: a populated one it has not
  // pinned, else an empty one it populates and pins. False when there is none (or the limit).
  bool AddSharedBlock() REQUIRES(grow_mu_) EXCLUDES(mu_);
  // Whether another block would take this process's extents past its limit (SetLimit).
  bool SharedAtLimit() EXCLUDES(mu_);
  // An empty block of the shared pool populated and pinned here; false when none is empty.
  bool PopulateSharedBlock() REQUIRES(grow_mu_) EXCLUDES(mu_);
  // SharedPool::Reclaim at most every kReclaimEveryNs (it reads /proc for every other slot
  // under the pool's mutex, and an eviction into a full pool asks every millisecond); true
  // when it freed units.
  bool ReclaimDue() REQUIRES(grow_mu_);
  static constexpr int64_t kReclaimEveryNs = 100'000'000;

  // Lock order: grow_mu_, then mu_. mu_ is never held across a driver call; grow_mu_ is held
  // for one whole pinning.
  Mutex mu_;
  Mutex grow_mu_;  // one pinning at a time
  Block blocks_[kMaxBlocks] GUARDED_BY(mu_) = {};
  int count_ GUARDED_BY(mu_) = 0;
  void* spare_ GUARDED_BY(grow_mu_) = nullptr;  // a populated block not pinned yet
  uint64_t limit_ GUARDED_BY(mu_) = 0;
  std::atomic<bool> registering_{false};
  SharedPool shared_;
  std::atomic<bool> shared_on_{false};
  pid_t shared_pid_ = 0;  // written once, before shared_on_
  bool shared_tried_ GUARDED_BY(grow_mu_) = false;
  int64_t last_reclaim_ns_ GUARDED_BY(grow_mu_) = INT64_MIN / 2;
  bool registered_[SharedPool::kMaxBlocks] GUARDED_BY(mu_) = {};  // pinned in this process
};

}  // namespace gshare::shim
