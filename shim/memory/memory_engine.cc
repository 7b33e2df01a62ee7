// The four engines behind MemoryEngine and the choice between them (memory_engine.h). The swap
// and managed engines are adapters over SwapSpace and ManagedSpace; off and checkpoint serve
// nothing themselves (under checkpoint the daemon moves the process whole).
#include "memory/memory_engine.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "driver/real_driver.h"
#include "memory/managed_space.h"
#include "memory/memory_host.h"
#include "memory/mono_clock.h"
#include "memory/swap_space.h"
#include "memory/swap_space_internal.h"
#include "memory/vmm_driver.h"
#include "shim_log.h"
#include "gshare/job_env.h"

namespace gshare::shim {
namespace {

// 0: not read yet; else 1 + the engine. Racing first readers compute the same answer.
std::atomic<int> g_requested{0};

proto::MemoryEngine Parse(const char* m) {
  if (m == nullptr || m[0] == '\0' || std::strcmp(m, "swap") == 0)
    return proto::MemoryEngine::kSwap;
  if (std::strcmp(m, "managed") == 0) return proto::MemoryEngine::kManaged;
  if (std::strcmp(m, "checkpoint") == 0) return proto::MemoryEngine::kCheckpoint;
  return proto::MemoryEngine::kOff;
}

// No engine: the driver serves everything and all of it is fixed memory.
class OffEngine final : public MemoryEngine {
 public:
  constexpr OffEngine() = default;
  proto::MemoryEngine kind() const override { return proto::MemoryEngine::kOff; }
};

// The daemon checkpoints the whole process: the driver serves its memory, all of which moves.
class CheckpointEngine final : public MemoryEngine {
 public:
  constexpr CheckpointEngine() = default;
  proto::MemoryEngine kind() const override { return proto::MemoryEngine::kCheckpoint; }
  bool MovesOthers() const override { return true; }
  void Report(int, proto::MemReportMsg* m) override {
    m->engine = static_cast<uint32_t>(proto::MemoryEngine::kCheckpoint);
    m->fixed = 0;
  }
};

// A swap-in that finds no room for this long without the free memory growing asks the
// daemon for more (SwapEngine::Back); at most its whole wait (GSHARE_SWAP_WAIT_MS). Evictions
// free the GPU a batch (swap_internal::kBatchBytes) at a time: 10-20 ms apart into pinned
// memory (pinned ahead, or a user's shared pool populated once), up to half a second apart
// into memory the host has not touched yet (~1.3 GB/s: docs/benchmarks.md, "What went wrong at
// the start of the pairs, and what changed"); asking then costs only evictions the daemon would
// have asked next. Waiting 1 s instead cost each switch between pooled services most of that
// second when the daemon's plan fell short of the driver's own memory (docs/benchmarks.md,
// "Pooling idle services").
constexpr int64_t kAskForRoomNs = 300'000'000;

class SwapEngine final : public MemoryEngine {
 public:
  constexpr SwapEngine() = default;
  proto::MemoryEngine kind() const override { return proto::MemoryEngine::kSwap; }
  bool ServesAllocations() const override { return true; }
  bool Alloc(int device, uint64_t bytes, CUdeviceptr* dptr, CUresult* r) override {
    *r = S().Alloc(device, bytes, dptr);
    return true;
  }
  bool AllocAsync(int device, uint64_t bytes, CUdeviceptr* dptr, CUresult* r) override {
    return Alloc(device, bytes, dptr, r);
  }
  bool Free(CUdeviceptr p, CUresult* r) override { return S().Free(p, r); }
  bool FreeAsync(CUdeviceptr p, CUstream s, CUresult* r) override { return S().FreeAsync(p, s, r); }
  bool AddressRange(CUdeviceptr p, CUdeviceptr* base, size_t* size) override {
    return S().AddressRange(p, base, size);
  }
  uint64_t Allocated(int device) override { return S().Allocated(device); }
  bool MovesOthers() const override { return true; }
  void Report(int device, proto::MemReportMsg* m) override {
    SwapStats st = S().Stats(device);
    m->engine = static_cast<uint32_t>(proto::MemoryEngine::kSwap);
    m->allocated += st.allocated;
    m->resident += st.resident;
    m->swaps_out = st.swaps_out;
    m->swaps_in = st.swaps_in;
    m->bytes_out = st.bytes_out;
    m->bytes_in = st.bytes_in;
    m->swap_ns = st.swap_ns;
    m->host_bytes = S().HostBytes();
    m->shared_pool = S().SharedPoolBytes();
    m->staged = st.staged;
    m->fresh = st.fresh;
  }
  bool WantsBack(int device) override { return !S().Running(device); }
  // The daemon evicted what its ledger says this job needs, but the ledger does not see all
  // device memory (the driver's own, per context and per loaded module): when the room runs
  // out, the job asks for what is missing as a demand, as a waiting allocation does (the daemon
  // evicts it with 2 GiB of headroom where it can), adding to what it asked before, and goes
  // on. It gives up once a whole wait (GSHARE_SWAP_WAIT_MS) brought no chunk back. Without the
  // ask, a swap-in on a GPU that the jobs had filled in shared mode waited its whole wait in
  // vain (docs/memory.md, "How `swap` works"). On success SwapIn marked the process running.
  bool Back(int device, BackStats* out) override {
    const int64_t t0 = MonoNowNs();
    const int64_t wait_ns = swap_internal::SwapInWaitNs();
    const int64_t ask_ns = std::min(kAskForRoomNs, wait_ns);
    SwapSpace::RoomNeed need;
    *out = {};
    SwapSpace::SwapInResult r = S().SwapIn(device, &out->moved, ask_ns, &need);
    out->room_wait_ns = need.room_wait_ns;
    uint64_t asked = 0, missing = need.missing;
    int64_t progress_at = MonoNowNs();
    while (r == SwapSpace::SwapInResult::kNoRoom && MonoNowNs() - progress_at < wait_ns) {
      asked += need.shortfall;
      Host().SetDemand(device, asked);
      Host().ReportNow(device);
      uint64_t more = 0;
      r = S().SwapIn(device, &more, ask_ns, &need);
      out->moved += more;
      out->room_wait_ns += need.room_wait_ns;
      if (need.missing < missing) progress_at = MonoNowNs();  // chunks came back
      missing = need.missing;
    }
    if (asked > 0) Host().SetDemand(device, 0);
    if (r != SwapSpace::SwapInResult::kDone) {
      Warn(
          "the swap-in on device %d did not finish (%s); its data stays in host memory and the "
          "job asks for the GPU again",
          device,
          r == SwapSpace::SwapInResult::kNoRoom ? "no room on the GPU" : "a driver call failed");
    }
    out->ns = static_cast<uint64_t>(MonoNowNs() - t0);
    return r == SwapSpace::SwapInResult::kDone;
  }
  void Stopped(int device, proto::ReleaseReason reason) override {
    S().SetRunning(device, false);
    if (reason == proto::ReleaseReason::kExit) S().Discard(device);
  }
  void Evict(int device, uint64_t bytes) override {
    if (!S().Running(device)) S().Evict(device, bytes);
  }
  void Stage(int device, uint64_t bytes) override { S().Stage(device, bytes); }
  void Prepare(uint64_t host_bytes) override { S().Prepare(host_bytes); }
  void RunAlone(int device) override {
    if (S().Running(device)) return;
    uint64_t moved;
    S().SwapIn(device, &moved, swap_internal::SwapInWaitNs());
    S().SetRunning(device, true);
  }
  uint64_t DiscardAtExit(int device) override { return S().Discard(device); }
  bool Pinning() const override { return S().Pinning(); }

 private:
  static SwapSpace& S() { return SwapSpace::Get(); }
};

// Managed memory served by the driver, prefetched with the lease (managed_space.h).
class ManagedEngine final : public MemoryEngine {
 public:
  constexpr ManagedEngine() = default;
  proto::MemoryEngine kind() const override { return proto::MemoryEngine::kManaged; }
  bool ServesAllocations() const override { return true; }
  bool Alloc(int device, uint64_t bytes, CUdeviceptr* dptr, CUresult* r) override {
    *r = M().Alloc(device, bytes, dptr);
    return true;
  }
  void DriverFreed(CUdeviceptr p) override { M().Forget(p); }
  bool OwnsManaged(CUdeviceptr p) override { return M().Owns(p); }
  uint64_t Allocated(int device) override { return M().Allocated(device); }
  void Report(int device, proto::MemReportMsg* m) override {
    m->engine = static_cast<uint32_t>(proto::MemoryEngine::kManaged);
    m->allocated += M().Allocated(device);
    m->resident += M().Resident(device);
  }
  bool WantsBack(int device) override { return M().Resident(device) == 0; }
  bool Back(int device, BackStats* out) override {
    *out = {};
    out->moved = M().Prefetch(device, true, &out->ns);
    return true;
  }
  // Managed memory leaves with the lease when another job wants the GPU (not when idle).
  void Stopped(int device, proto::ReleaseReason reason) override {
    uint64_t ns;
    if (reason == proto::ReleaseReason::kDropped) M().Prefetch(device, false, &ns);
  }
  void Evict(int device, uint64_t) override {
    uint64_t ns;
    M().Prefetch(device, false, &ns);
  }

 private:
  static ManagedSpace& M() { return ManagedSpace::Get(); }
};

constinit OffEngine g_off;
constinit CheckpointEngine g_checkpoint;
constinit SwapEngine g_swap;
constinit ManagedEngine g_managed;
std::atomic<MemoryEngine*> g_engine{nullptr};

MemoryEngine& Choose() {
  const proto::MemoryEngine requested = RequestedMemoryEngine();
  bool vmm = false, managed = false;
  if (requested == proto::MemoryEngine::kSwap || requested == proto::MemoryEngine::kManaged) {
    vmm = Vmm() != nullptr;
    managed = RealFunction(kHook_cuMemAllocManaged) != nullptr &&
              RealFunction(kHook_cuMemPrefetchAsync_v2) != nullptr;
  }
  switch (RunnableEngine(requested, vmm, managed)) {
    case proto::MemoryEngine::kSwap: {
      const char* limit = std::getenv("GSHARE_HOST_POOL_LIMIT");
      if (limit != nullptr) SwapSpace::Get().SetHostPoolLimit(std::strtoull(limit, nullptr, 10));
      return g_swap;
    }
    case proto::MemoryEngine::kManaged: return g_managed;
    case proto::MemoryEngine::kCheckpoint: return g_checkpoint;
    default: break;
  }
  if (requested == proto::MemoryEngine::kSwap) {
    Warn("the CUDA driver has no virtual memory management; --memory swap is off");
  } else if (requested == proto::MemoryEngine::kManaged) {
    Warn("the CUDA driver lacks managed memory or cuMemPrefetchAsync_v2; --memory managed is off");
  }
  return g_off;
}

}  // namespace

proto::MemoryEngine RequestedMemoryEngine() {
  int known = g_requested.load(std::memory_order_acquire);
  if (__builtin_expect(known != 0, 1)) return static_cast<proto::MemoryEngine>(known - 1);
  proto::MemoryEngine e = Parse(std::getenv(job_env::kMemory));
  g_requested.store(static_cast<int>(e) + 1, std::memory_order_release);
  return e;
}

MemoryEngine& Engine() {
  MemoryEngine* e = g_engine.load(std::memory_order_acquire);
  if (__builtin_expect(e != nullptr, 1)) return *e;
  // Racing first callers choose the same engine; only the first one's warning is wanted.
  MemoryEngine* chosen = &Choose();
  if (g_engine.compare_exchange_strong(e, chosen, std::memory_order_acq_rel)) return *chosen;
  return *e;
}

}  // namespace gshare::shim
