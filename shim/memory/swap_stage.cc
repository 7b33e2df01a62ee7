// Staging (SwapSpace::Stage): while a process is idle on a GPU, a background thread copies its
// resident memory there into the host pool and leaves it on the GPU. A later eviction of a
// staged chunk is an unmap and a release, no copy, so a job that arrives needing the room
// gets it at once, and a process that runs again before anyone needed the room finds its
// memory where it was. Staged copies are valid only until the process runs on the device
// again: SwapIn drops them first (DropStagedLocked), under the same lock this thread copies
// under, and the thread copies only while the process does not run there.
#include <pthread.h>

#include <algorithm>

#include "memory/memory_host.h"
#include "memory/mono_clock.h"
#include "memory/swap_space.h"
#include "memory/swap_space_internal.h"
#include "memory/vmm_driver.h"
#include "mutex.h"

namespace gshare::shim {
using swap_internal::GiveHost;

namespace {
constinit Mutex g_stage_mu;
pthread_cond_t g_stage_cv = PTHREAD_COND_INITIALIZER;  // on g_stage_mu
// Per device: at most this many bytes staged (0: nothing to do).
uint64_t g_stage_target[kMaxDevices] GUARDED_BY(g_stage_mu) = {};
bool g_stage_started GUARDED_BY(g_stage_mu) = false;
// Per device: the shared pool's blocks are to be pinned while the process is idle there.
bool g_pin_wanted[kMaxDevices] GUARDED_BY(g_stage_mu) = {};

// A device with staging or pinning to do (after waiting until there is one); its pinning is
// then taken as done.
int WaitForWork() {
  MutexLock lock(g_stage_mu);
  for (;;) {
    for (int d = 0; d < kMaxDevices; ++d) {
      if (g_stage_target[d] > 0 || g_pin_wanted[d]) {
        g_pin_wanted[d] = false;
        return d;
      }
    }
    pthread_cond_wait(&g_stage_cv, g_stage_mu.native());
  }
}

uint64_t TargetOf(int device) {
  MutexLock lock(g_stage_mu);
  return g_stage_target[device];
}

// Ends `device`'s staging unless a new target came meanwhile.
void Finish(int device, uint64_t target) {
  MutexLock lock(g_stage_mu);
  if (g_stage_target[device] == target) g_stage_target[device] = 0;
}
}  // namespace

void SwapSpace::DropStagedLocked(int device) {
  for (int ri = 0; ri < regions_.count(); ++ri) {
    Region* r = regions_[ri];
    if (r->device != device) continue;
    for (int ci = 0; ci < r->nchunks; ++ci) {
      if (r->chunks[ci].staged()) GiveHost(pool_, r->chunks[ci]);
    }
  }
}

uint64_t SwapSpace::StageBatchLocked(int device, uint64_t limit, bool* pool_full) {
  *pool_full = false;
  if (Running(device) || regions_.count() == 0 || !devices_.Enter(device)) return 0;
  const VmmDriver& v = *Vmm();
  CUstream stream = devices_.Stream(device);
  Batch batch;
  bool failed = false, stop = false;
  for (int ri = 0; ri < regions_.count() && !stop; ++ri) {
    Region* r = regions_[ri];
    if (r->device != device || r->exported) continue;
    for (int ci = 0; ci < r->nchunks && !stop; ++ci) {
      Chunk& c = r->chunks[ci];
      if (c.state != swap_internal::kResident || c.host != nullptr) continue;
      if (batch.bytes + c.bytes > limit) break;  // this region's next chunk passes the limit
      void* host = pool_.TryTake(c.bytes);
      if (host == nullptr) {
        *pool_full = stop = true;
      } else if (v.cuMemcpyDtoHAsync_v2(host, r->base + c.offset, c.bytes, stream) !=
                 CUDA_SUCCESS) {
        pool_.Give(host, c.bytes);
        failed = stop = true;
      } else {
        c.host = host;
        stop = batch.Add(r, &c);  // the batch is full
      }
    }
    stop = stop || batch.bytes >= limit;
  }
  // The copies must be complete before a chunk counts as staged: an eviction frees it
  // without copying.
  if (batch.n > 0 && v.cuStreamSynchronize(stream) != CUDA_SUCCESS) failed = true;
  uint64_t staged = 0;
  for (int i = 0; i < batch.n; ++i) {
    Chunk& c = *batch.chunk[i];
    if (failed) {
      GiveHost(pool_, c);
    } else {
      staged += c.bytes;
    }
  }
  EngineDevices::Leave();
  return failed ? 0 : staged;
}

void* SwapSpace::StageThread(void* arg) {
  auto* self = static_cast<SwapSpace*>(arg);
  for (;;) {
    const int device = WaitForWork();
    // The process is idle: the shared pool's blocks other processes populated get pinned here
    // now, not in the middle of the eviction someone will wait for (host_pool.h).
    if (CUcontext ctx = self->ContextUnlocked(device);
        ctx != nullptr && !self->Running(device) &&
        Extras().cuCtxPushCurrent_v2(ctx) == CUDA_SUCCESS) {
      self->pool_.PinShared();
      EngineDevices::Leave();
    }
    const uint64_t target = TargetOf(device);
    const int64_t start = MonoNowNs();
    uint64_t done = 0, reported = 0;
    for (;;) {
      if (TargetOf(device) != target) break;  // a new target: start over
      self->mu_.Lock();
      const uint64_t have = self->regions_.Staged(device);
      bool pool_full = false;
      uint64_t got = have >= target ? 0 : self->StageBatchLocked(device, target - have, &pool_full);
      const bool running = self->Running(device);
      self->mu_.Unlock();
      done += got;
      if (running || have >= target) {
        Finish(device, target);
        break;
      }
      if (got == 0 && !pool_full) {  // nothing left to stage, or a copy failed
        Finish(device, target);
        break;
      }
      if (pool_full) {
        // One block more, outside the engine's lock (populating takes ~0.5 s/GiB on a fresh
        // host); a pinning needs a context current.
        bool grown = false;
        CUcontext ctx = self->ContextUnlocked(device);
        if (ctx != nullptr && Extras().cuCtxPushCurrent_v2(ctx) == CUDA_SUCCESS) {
          const uint64_t before = self->pool_.usable();
          grown = self->pool_.Grow(before + HostPool::kBlockBytes) > before;
          EngineDevices::Leave();
        }
        if (!grown && got == 0) {  // the host budget or the host's memory is used up
          Finish(device, target);
          break;
        }
      }
      if (done - reported >= HostPool::kBlockBytes) {
        reported = done;
        Host().MemoryChanged(device);
      }
      // At most kStageBytesPerSec since the start.
      const int64_t due = start + static_cast<int64_t>(done * 1e9 / kStageBytesPerSec);
      const int64_t now = MonoNowNs();
      if (due > now) swap_internal::SleepNs(due - now);
    }
    Host().MemoryChanged(device);
    if (swap_internal::TraceOn()) {
      swap_internal::TraceMove("stage", done, start, self->pool_.pinned());
    }
  }
  return nullptr;
}

void SwapSpace::PinPoolLater(int device) {
  if (device < 0 || device >= kMaxDevices || pool_.shared_bytes() == 0) return;
  MutexLock lock(g_stage_mu);
  g_pin_wanted[device] = true;
  if (!g_stage_started)
    g_stage_started = swap_internal::StartDetached(StageThread, this, "gs-stage");
  pthread_cond_signal(&g_stage_cv);
}

void SwapSpace::Stage(int device, uint64_t bytes) {
  if (device < 0 || device >= kMaxDevices) return;
  MutexLock lock(g_stage_mu);
  g_stage_target[device] = bytes;
  if (!g_stage_started && bytes > 0) {
    g_stage_started = swap_internal::StartDetached(StageThread, this, "gs-stage");
  }
  pthread_cond_signal(&g_stage_cv);
}

}  // namespace gshare::shim
