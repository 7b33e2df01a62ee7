// The swap engine's data movement: eviction to the pinned host pool and swap-in, each in
// batches of up to 512 MiB of asynchronous copies on the engine's own stream, two in flight
// (BatchPipe): while one batch copies, the other is finished, by the unmaps (eviction) or
// the host extents given back (swap-in). Freeing batch by batch lets another process's
// swap-in use the memory while this one is still evicting (the two overlap, near the copy
// engines' duplex rate: docs/benchmarks.md, "Handoff speed").
#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <cstdlib>

#include "memory/memory_host.h"
#include "memory/mono_clock.h"
#include "driver/real_driver.h"
#include "shim_log.h"
#include "memory/swap_space.h"
#include "memory/swap_space_internal.h"
#include "memory/vmm_driver.h"
#include "mutex.h"

namespace gshare::shim {
using swap_internal::GiveHost;

namespace {
// What a device still needs (SwapSpace::RoomNeed) with `missing` bytes not resident there:
// the shortfall beyond the GPU's free memory, at least `at_least`. Needs the device's context
// current.
// Sets need's missing and shortfall; its room_wait_ns, counted through the call, stays.
void SetNeed(SwapSpace::RoomNeed* need, uint64_t missing, uint64_t at_least) {
  uint64_t free = swap_internal::FreeDeviceBytes();
  uint64_t short_by = missing > free ? missing - free : 0;
  need->missing = missing;
  need->shortfall = short_by > at_least ? short_by : at_least;
}
}  // namespace

int64_t swap_internal::SwapInWaitNs() {
  static const int64_t ns = [] {
    const char* v = std::getenv("GSHARE_SWAP_WAIT_MS");
    long long ms = v != nullptr ? std::atoll(v) : 0;
    return ms > 0 ? ms * 1'000'000 : kSwapInWaitNs;
  }();
  return ns;
}

bool swap_internal::TraceOn() {
  static const bool on = std::getenv("GSHARE_TRACE_SWAP") != nullptr;
  return on;
}

void swap_internal::TraceMove(const char* what, uint64_t bytes, int64_t begin_ns,
                              uint64_t pool_bytes) {
  if (!TraceOn()) return;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  double end = static_cast<double>(now.tv_sec) + now.tv_nsec / 1e9;
  double begin = end - static_cast<double>(MonoNowNs() - begin_ns) / 1e9;
  Warn("trace %s %llu %.3f %.3f pool %llu", what, static_cast<unsigned long long>(bytes), begin,
       end, static_cast<unsigned long long>(pool_bytes));
}

uint64_t SwapSpace::Evict(int device, uint64_t bytes) {
  if (device < 0 || device >= kMaxDevices || bytes == 0) return 0;
  mu_.Lock();
  ReapDeferredLocked(true);
  if (regions_.count() == 0 || !devices_.Enter(device)) {
    mu_.Unlock();
    return 0;
  }
  const VmmDriver& v = *Vmm();
  BatchPipe pipe = PipeOf(device);
  int64_t start = MonoNowNs();
  uint64_t moved = 0;
  bool stop = false;
  // Runs inside this hold of mu_, called through BatchPipe, which the analysis cannot see.
  auto finish = [&](Batch& batch, bool ok) NO_THREAD_SAFETY_ANALYSIS {
    for (int i = 0; i < batch.n; ++i) {
      Chunk& c = *batch.chunk[i];
      if (!ok) {  // the copy failed: the chunk stays resident
        GiveHost(pool_, c);
        continue;
      }
      UnbackLocked(*batch.owner[i], c);
      c.state = swap_internal::kEvicted;
      moved += c.bytes;
      stats_[device].bytes_out += c.bytes;
    }
    if (!ok) stop = true;
  };
  // Staged chunks first: their host copy is current, so they leave without a copy.
  for (int ri = 0; ri < regions_.count() && moved < bytes; ++ri) {
    Region* r = regions_[ri];
    if (r->device != device || r->exported) continue;
    for (int ci = 0; ci < r->nchunks && moved < bytes; ++ci) {
      Chunk& c = r->chunks[ci];
      if (!c.staged()) continue;
      UnbackLocked(*r, c);
      c.state = swap_internal::kEvicted;
      moved += c.bytes;
      stats_[device].bytes_out += c.bytes;
    }
  }
  stop = moved >= bytes;
  for (int ri = 0; ri < regions_.count() && !stop; ++ri) {
    Region* r = regions_[ri];
    if (r->device != device || r->exported) continue;
    for (int ci = 0; ci < r->nchunks && !stop; ++ci) {
      Chunk& c = r->chunks[ci];
      if (c.state != swap_internal::kResident) continue;
      if (moved + pipe.InFlightBytes() >= bytes) {
        stop = true;
        break;
      }
      c.host = pool_.TakeWaiting(c.bytes, kHostRoomStallNs);
      if (c.host == nullptr) {
        Warn("cannot pin host memory for swapping; %llu bytes stay on the GPU",
             static_cast<unsigned long long>(bytes - moved - pipe.InFlightBytes()));
        stop = true;
        break;
      }
      if (v.cuMemcpyDtoHAsync_v2(c.host, r->base + c.offset, c.bytes, pipe.stream) !=
          CUDA_SUCCESS) {
        GiveHost(pool_, c);
        stop = true;
        break;
      }
      if (pipe.Current().Add(r, &c)) pipe.Advance(finish);
    }
  }
  pipe.Drain(finish);
  EngineDevices::Leave();
  stats_[device].swap_ns += MonoNowNs() - start;
  if (moved > 0) ++stats_[device].swaps_out;
  // The pool's bytes while the evicted data is still in it: once mu_ is let go, a swap-in on
  // another thread may take it all back and give the extents up.
  const uint64_t pool_bytes = swap_internal::TraceOn() ? pool_.pinned() : 0;
  mu_.Unlock();
  swap_internal::TraceMove("evict", moved, start, pool_bytes);
  if (moved > 0) PinPoolLater(device);  // idle now: the rest of a shared pool gets pinned
  return moved;
}

uint64_t SwapSpace::Discard(int device) {
  if (device < 0 || device >= kMaxDevices) return 0;
  mu_.Lock();
  ReapDeferredLocked(true);
  uint64_t freed = 0;
  if (regions_.count() != 0 && devices_.Enter(device)) {
    for (int ri = 0; ri < regions_.count(); ++ri) {
      Region* r = regions_[ri];
      if (r->device != device || r->exported) continue;
      for (int ci = 0; ci < r->nchunks; ++ci) {
        Chunk& c = r->chunks[ci];
        if (c.state != swap_internal::kResident) continue;
        UnbackLocked(*r, c);
        if (c.host != nullptr) GiveHost(pool_, c);  // a staged copy
        c.state = swap_internal::kFresh;            // a later swap-in creates it anew, without data
        freed += c.bytes;
      }
    }
    EngineDevices::Leave();
  }
  mu_.Unlock();
  return freed;
}

SwapSpace::SwapInResult SwapSpace::SwapIn(int device, uint64_t* moved_out, int64_t stall_ns,
                                          RoomNeed* need) {
  *moved_out = 0;
  if (need != nullptr) need->room_wait_ns = 0;
  if (device < 0 || device >= kMaxDevices) return SwapInResult::kFailed;
  mu_.Lock();
  DropStagedLocked(device);  // the process runs on `device` next: its data will change
  bool any = regions_.Bytes(device, /*resident=*/false) > 0;
  if (!any) running_[device].store(true, std::memory_order_release);
  if (!any || !devices_.Enter(device)) {
    mu_.Unlock();
    return any ? SwapInResult::kFailed : SwapInResult::kDone;
  }
  const VmmDriver& v = *Vmm();
  BatchPipe pipe = PipeOf(device);
  int64_t start = MonoNowNs();
  uint64_t moved = 0;
  SwapInResult result = SwapInResult::kDone;
  // Finishes a batch; on failure unmaps what it created (host copies stay) and the result
  // is kFailed. Runs inside this hold of mu_, called through BatchPipe, which the analysis
  // cannot see.
  auto finish = [&](Batch& batch, bool ok) NO_THREAD_SAFETY_ANALYSIS {
    for (int i = 0; i < batch.n; ++i) {
      Chunk& c = *batch.chunk[i];
      if (!ok) {
        UnbackLocked(*batch.owner[i], c);
        continue;
      }
      if (c.host != nullptr) {
        GiveHost(pool_, c);
        moved += c.bytes;
        stats_[device].bytes_in += c.bytes;
      }
      c.state = swap_internal::kResident;
    }
    if (!ok) result = SwapInResult::kFailed;
  };
  for (int ri = 0; ri < regions_.count() && result == SwapInResult::kDone; ++ri) {
    Region* r = regions_[ri];
    if (r->device != device) continue;
    for (int ci = 0; ci < r->nchunks && result == SwapInResult::kDone; ++ci) {
      Chunk& c = r->chunks[ci];
      if (c.state == swap_internal::kResident) continue;
      // Another job may still be evicting to make this room: wait while it makes progress.
      CUresult res = BackChunk(*r, c);
      if (res == CUDA_ERROR_OUT_OF_MEMORY) {
        const int64_t wait_from = MonoNowNs();
        RoomWait wait(stall_ns, wait_from);
        while (wait.KeepWaiting(MonoNowNs(), swap_internal::FreeDeviceBytes)) {
          swap_internal::SleepNs(wait.PauseNs(MonoNowNs()));
          if ((res = BackChunk(*r, c)) != CUDA_ERROR_OUT_OF_MEMORY) break;
        }
        if (need != nullptr) need->room_wait_ns += MonoNowNs() - wait_from;
      }
      if (res == CUDA_ERROR_OUT_OF_MEMORY) {  // the copies queued so far are good
        pipe.Drain(finish);  // first, so that what they brought back counts as resident
        if (need != nullptr) SetNeed(need, regions_.Bytes(device, /*resident=*/false), c.bytes);
        if (result == SwapInResult::kDone) result = SwapInResult::kNoRoom;
        break;
      }
      if (res == CUDA_SUCCESS && c.host != nullptr) {
        res = v.cuMemcpyHtoDAsync_v2(r->base + c.offset, c.host, c.bytes, pipe.stream);
        if (res != CUDA_SUCCESS) UnbackLocked(*r, c);
      }
      if (res != CUDA_SUCCESS) {
        Warn("swap-in of %llu bytes failed (CUresult %d); the data stays in host memory",
             static_cast<unsigned long long>(c.bytes), res);
        pipe.Drain(finish, /*current_ok=*/false);
        result = SwapInResult::kFailed;
        break;
      }
      if (pipe.Current().Add(r, &c)) pipe.Advance(finish);
    }
  }
  pipe.Drain(finish);
  EngineDevices::Leave();
  stats_[device].swap_ns += MonoNowNs() - start;
  if (moved > 0) ++stats_[device].swaps_in;
  if (result == SwapInResult::kDone) running_[device].store(true, std::memory_order_release);
  *moved_out = moved;
  const uint64_t pool_bytes = swap_internal::TraceOn() ? pool_.pinned() : 0;
  mu_.Unlock();
  swap_internal::TraceMove("swapin", moved, start, pool_bytes);
  return result;
}

CUresult SwapSpace::ResidentLocked(Region& r) {
  if (!devices_.Enter(r.device)) return CUDA_ERROR_INVALID_CONTEXT;
  const VmmDriver& v = *Vmm();
  CUstream s = devices_.Stream(r.device);
  CUresult res = CUDA_SUCCESS;
  // A chunk that finds the GPU full waits for room as an allocation does (another job may
  // hold the GPU while this one exports its memory), asking the daemon for the region.
  RoomWait wait(swap_internal::kAllocWaitNs, MonoNowNs());
  bool demanded = false;
  for (int i = 0; i < r.nchunks && res == CUDA_SUCCESS; ++i) {
    Chunk& c = r.chunks[i];
    if (c.state == swap_internal::kResident) {
      // A staged copy: resident for good, it would go stale.
      if (c.host != nullptr) GiveHost(pool_, c);
      continue;
    }
    res = BackChunk(r, c);
    if (res == CUDA_ERROR_OUT_OF_MEMORY &&
        wait.KeepWaiting(MonoNowNs(), swap_internal::FreeDeviceBytes)) {
      if (!demanded) Host().SetDemand(r.device, r.size);
      demanded = true;
      EngineDevices::Leave();
      mu_.Unlock();
      swap_internal::SleepNs(wait.PauseNs(MonoNowNs(), 2'000'000));
      mu_.Lock();
      if (!devices_.Enter(r.device)) {
        Host().SetDemand(r.device, 0);
        return CUDA_ERROR_INVALID_CONTEXT;
      }
      res = CUDA_SUCCESS;
      i = -1;  // an eviction meanwhile may have moved chunks already back: look again
      continue;
    }
    if (res == CUDA_SUCCESS && c.host != nullptr) {
      res = v.cuMemcpyHtoDAsync_v2(r.base + c.offset, c.host, c.bytes, s);
      if (res == CUDA_SUCCESS) res = v.cuStreamSynchronize(s);
      if (res != CUDA_SUCCESS) {
        UnbackLocked(r, c);
      } else {
        GiveHost(pool_, c);
      }
    }
    if (res == CUDA_SUCCESS) c.state = swap_internal::kResident;
  }
  if (demanded) Host().SetDemand(r.device, 0);
  EngineDevices::Leave();
  return res;
}

void SwapSpace::MarkExportedLocked(Region& r) {
  if (r.exported) return;
  r.exported = true;
  allocated_[r.device] -= r.size;
  Host().AddFixedBytes(r.device, static_cast<int64_t>(r.size));
}

SwapStats SwapSpace::Stats(int device) {
  mu_.Lock();
  SwapStats st = stats_[device];
  st.allocated = allocated_[device];
  st.resident = regions_.Bytes(device, /*resident=*/true);
  st.staged = regions_.Staged(device);
  st.fresh = regions_.Fresh(device);
  mu_.Unlock();
  return st;
}

uint64_t SwapSpace::Allocated(int device) {
  mu_.Lock();
  uint64_t n = allocated_[device];
  mu_.Unlock();
  return n;
}

namespace {
constinit Mutex g_prepare_mu;
pthread_cond_t g_prepare_cv = PTHREAD_COND_INITIALIZER;  // on g_prepare_mu
uint64_t g_prepare_target GUARDED_BY(g_prepare_mu) = 0;
bool g_prepare_started GUARDED_BY(g_prepare_mu) = false;
}  // namespace

void* SwapSpace::PrepareThread(void* arg) {
  auto* self = static_cast<SwapSpace*>(arg);
  for (;;) {
    g_prepare_mu.Lock();
    while (self->pool_.usable() >= g_prepare_target) {
      pthread_cond_wait(&g_prepare_cv, g_prepare_mu.native());
    }
    uint64_t target = g_prepare_target;
    g_prepare_mu.Unlock();
    // Pinning needs a context: the first device the engine has one for.
    int device = -1;
    for (int d = 0; d < kMaxDevices && device < 0; ++d) {
      if (self->ContextUnlocked(d) != nullptr) device = d;
    }
    bool pushed =
        device >= 0 && Extras().cuCtxPushCurrent_v2(self->ContextUnlocked(device)) == CUDA_SUCCESS;
    int64_t start = MonoNowNs();
    uint64_t had = self->pool_.usable();
    uint64_t got = pushed ? had : 0;
    // In steps, each followed by a memory report: the daemon prices the next handoff by the
    // pool it knows of (MemoryCoordinator::HandoffBytes), and a handoff it cannot price because the
    // last report predates the pin keeps the holder on the GPU through its CPU phases
    // (docs/benchmarks.md, "Room for the first turn's growth, pools the daemon sees").
    for (uint64_t step = got; pushed && got >= step && got < target;) {
      step = std::min(got + kPrepareStepBytes, target);
      uint64_t before = got;
      got = self->pool_.Grow(step);  // short of `step`: cannot pin more, the loop ends
      if (got > before) Host().MemoryChanged(-1);
    }
    swap_internal::TraceMove("pin", got > had ? got - had : 0, start, got);
    if (pushed) EngineDevices::Leave();
    if (got < target) {
      // Cannot pin more (limit, or the host is out of memory): stop asking.
      g_prepare_mu.Lock();
      if (g_prepare_target == target) g_prepare_target = got;
      g_prepare_mu.Unlock();
    }
  }
  return nullptr;
}

void SwapSpace::Prepare(uint64_t host_bytes) {
  g_prepare_mu.Lock();
  if (host_bytes > g_prepare_target) g_prepare_target = host_bytes;
  if (!g_prepare_started) {
    g_prepare_started = swap_internal::StartDetached(PrepareThread, this, "gs-prepare");
  }
  pthread_cond_signal(&g_prepare_cv);
  g_prepare_mu.Unlock();
}

}  // namespace gshare::shim
