// Constants and helpers shared by the swap engine's files, internal to it: chunk, slab and
// batch sizes, waits for room, the clock, the swap trace, the batches of copies (its records
// are in swap_records.h). Any thread; FreeDeviceBytes asks about the calling thread's current
// context (Vmm() resolved first).
#pragma once

#include <pthread.h>
#include <time.h>

#include <cstdint>

#include "driver/cuda_abi.h"
#include "driver/real_driver.h"
#include "memory/room_wait.h"
#include "memory/host_pool.h"
#include "memory/mono_clock.h"
#include "memory/swap_records.h"
#include "memory/swap_space.h"
#include "memory/vmm_driver.h"
#include "shim_thread.h"

namespace gshare::shim::swap_internal {

// kGranule, kSlabMinShift and the chunk states are in swap_records.h.
inline constexpr uint64_t kChunkBytes = 64ull << 20;  // unit of eviction (issue: >= 64 MiB)
inline constexpr uint64_t kSlabMax = 1ull << 20;      // larger allocations get a region
// Copies finished by one synchronization; two batches are in flight (BatchPipe), so ~1 GiB
// is queued on the copy engine while the older half is unmapped or given back, and an
// eviction frees the GPU in 512 MiB steps that another process's swap-in follows.
// A batch ends at kBatchChunks chunks too, so that one of small chunks (2 MiB slabs) is
// short as well.
inline constexpr uint64_t kBatchBytes = 512ull << 20;
inline constexpr int kBatchChunks = 16;
// Device memory taken by the process's own CUDA context on a GPU of `total` bytes: 512 MiB
// (docs/memory.md, "What a job sees"), at most 1/16 of a (small, test) device.
inline uint64_t ContextReserve(uint64_t total) {
  uint64_t r = 512ull << 20;
  return total / 16 < r ? total / 16 : r;
}
// An allocation waits for room while the GPU's free memory grows, and this long without growth.
inline constexpr int64_t kAllocWaitNs = 30'000'000'000;
// A swap-in waits for room while the GPU's free memory grows, and this long without growth
// (GSHARE_SWAP_WAIT_MS); then it rolls back and the job gives its lease back and asks again.
inline constexpr int64_t kSwapInWaitNs = 10'000'000'000;
int64_t SwapInWaitNs();

// Free bytes of the current context's GPU from the real cuMemGetInfo; 0 when it fails.
inline uint64_t FreeDeviceBytes() {
  size_t free = 0, total = 0;
  return Vmm()->cuMemGetInfo_v2(&free, &total) == CUDA_SUCCESS ? free : 0;
}

// False (with one line on stderr) when `bytes` more can never fit on `device`, even with every
// other job's movable memory evicted; `allocated`: the bytes the engine backs there already.
bool CanEverFit(int device, uint64_t bytes, uint64_t allocated);

// Gives the chunk's host extent (its evicted data or staged copy) back to `pool`.
inline void GiveHost(HostPool& pool, Chunk& c) {
  pool.Give(c.host, c.bytes);
  c.host = nullptr;
}

// GSHARE_TRACE_SWAP set (to anything): each eviction, swap-in and pin-ahead of the swap
// engine ends with one line on stderr, "gshare: trace <evict|swapin|pin> <bytes> <begin>
// <end> pool <pinned bytes>", begin and end in epoch seconds; test/bench/pair_timeline.py
// merges them into a pair's timeline. `begin_ns` is a MonoNowNs() value. Any thread.
void TraceMove(const char* what, uint64_t bytes, int64_t begin_ns, uint64_t pool_bytes);
// Whether GSHARE_TRACE_SWAP is set (read once): callers skip computing TraceMove's arguments
// (the pool's size takes its lock) when it is not.
bool TraceOn();

// Starts `run(arg)` on a detached thread named `name` (the engine's background threads:
// pin-ahead and staging); false when pthread_create fails.
inline bool StartDetached(void* (*run)(void*), void* arg, const char* name) {
  pthread_t tid;
  return StartShimThread(&tid, /*detached=*/true, run, arg, name) == 0;
}

inline void SleepNs(int64_t ns) {
  struct timespec ts = {static_cast<time_t>(ns / 1'000'000'000),
                        static_cast<long>(ns % 1'000'000'000)};
  nanosleep(&ts, nullptr);
}

}  // namespace gshare::shim::swap_internal

namespace gshare::shim {

// Chunk copies queued on the engine's stream and finished together, one synchronization per
// kBatchChunks chunks or kBatchBytes: the unit of work of Evict and SwapIn.
struct SwapSpace::Batch {
  Chunk* chunk[swap_internal::kBatchChunks];
  Region* owner[swap_internal::kBatchChunks];
  int n = 0;
  uint64_t bytes = 0;
  // Adds a chunk whose copy is queued; true when the batch is full and must be finished.
  bool Add(Region* r, Chunk* c) {
    chunk[n] = c;
    owner[n] = r;
    ++n;
    bytes += c->bytes;
    return n == swap_internal::kBatchChunks || bytes >= swap_internal::kBatchBytes;
  }
  void Clear() {
    n = 0;
    bytes = 0;
  }
};

// Two batches in flight on the engine's stream (Evict, SwapIn): while the copies of the
// current one run, the older one is finished, so the copy engine does not idle through the
// driver calls of a finish (a batch's unmaps or mappings; each chunk's cuMemUnmap +
// cuMemRelease or cuMemCreate + cuMemMap + cuMemSetAccess). Each batch's end is an event
// recorded after its copies; without events (creation failed) a finish synchronizes the
// whole stream, which is correct but serial. `finish(batch, ok)` does the batch's
// bookkeeping; ok is false when its copies failed. Plain struct; the engine's mu_ guards it.
struct SwapSpace::BatchPipe {
  CUstream stream;
  CUevent done[2];  // EngineDevices::BatchEvents; nullptr: synchronize the stream
  Batch batch[2];
  bool recorded[2] = {false, false};
  int cur = 0;

  Batch& Current() { return batch[cur]; }
  uint64_t InFlightBytes() const { return batch[0].bytes + batch[1].bytes; }
  // The current batch is full: queue its end, finish the older one, start a new one.
  template <class Finish>
  void Advance(Finish& finish) {
    Record(cur);
    int older = 1 - cur;
    if (batch[older].n > 0) End(older, finish, true);
    cur = older;
  }
  // Finishes both batches, the older first; the current one as failed when `current_ok` is
  // false (not all of its copies could be queued).
  template <class Finish>
  void Drain(Finish& finish, bool current_ok = true) {
    int older = 1 - cur;
    if (batch[cur].n > 0) Record(cur);
    if (batch[older].n > 0) End(older, finish, true);
    if (batch[cur].n > 0) End(cur, finish, current_ok);
  }

 private:
  void Record(int i) {
    recorded[i] = done[i] != nullptr && Extras().cuEventRecord(done[i], stream) == CUDA_SUCCESS;
  }
  template <class Finish>
  void End(int i, Finish& finish, bool ok) {
    CUresult r =
        recorded[i] ? Extras().cuEventSynchronize(done[i]) : Vmm()->cuStreamSynchronize(stream);
    finish(batch[i], ok && r == CUDA_SUCCESS);
    batch[i].Clear();
    recorded[i] = false;
  }
};

}  // namespace gshare::shim
