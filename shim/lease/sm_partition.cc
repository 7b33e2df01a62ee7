// The SM partition: per device, one green context of part of the SMs and a table of
// companion streams, one per application stream that launched narrow.
#include "lease/sm_partition.h"

#include <atomic>
#include <cstdlib>

#include "hooks/census.h"
#include "hooks/context_registry.h"
#include "hooks/real_driver.h"
#include "memory/vmm_driver.h"
#include "mutex.h"
#include "shim_log.h"

namespace gshare::shim {
namespace {

using namespace gs_cuda;

constexpr int kMaxCompanions = 32;

struct Companion {
  CUstream user = nullptr;
  CUstream green = nullptr;
  CUevent into = nullptr;
  CUevent back = nullptr;
};

struct Partition {
  enum : int { kUntried = 0, kReady = 1, kNone = -1 };
  Mutex mu;
  std::atomic<int> state{kUntried};
  CUcontext primary = nullptr;  // written before state turns kReady
  CUgreenCtx green = nullptr;
  // Entries below count are complete (published by the release store, never changed).
  Companion companions[kMaxCompanions];
  std::atomic<int> count{0};
};

Partition g_parts[kMaxDevices];

// GSHARE_PRIORITY_SM_PCT, read once: 1..99, or 0 for no partition.
int SmPct() {
  static const int pct = [] {
    const char* env = std::getenv("GSHARE_PRIORITY_SM_PCT");
    if (env == nullptr || *env == '\0') return kDefaultBusySmPct;
    long v = std::atol(env);
    return v <= 0 || v >= 100 ? 0 : static_cast<int>(v);
  }();
  return pct;
}

bool DriverHasGreenContexts() {
  const DriverExtras& x = Extras();
  return x.cuStreamWaitEvent && x.cuDeviceGetDevResource && x.cuDevSmResourceSplitByCount &&
         x.cuDevResourceGenerateDesc && x.cuGreenCtxCreate && x.cuGreenCtxStreamCreate &&
         x.cuDevicePrimaryCtxRetain && x.cuDevicePrimaryCtxRelease;
}

// Makes `p`'s green context of SmPct() of the SMs of the calling thread's device, whose
// current context must be the primary one. Under p.mu.
void Make(Partition& p, int device) REQUIRES(p.mu) {
  const DriverExtras& x = Extras();
  CUdevice dev = 0;
  CUcontext current = nullptr;
  if (!DriverHasGreenContexts() || x.cuCtxGetDevice(&dev) != CUDA_SUCCESS ||
      x.cuCtxGetCurrent(&current) != CUDA_SUCCESS) {
    p.state.store(Partition::kNone, std::memory_order_release);
    return;
  }
  CUcontext primary = nullptr;
  if (x.cuDevicePrimaryCtxRetain(&primary, dev) != CUDA_SUCCESS) {
    p.state.store(Partition::kNone, std::memory_order_release);
    return;
  }
  const char* failed = nullptr;
  CUresult r = CUDA_SUCCESS;
  CUdevResource all = {};
  CUdevResource group = {};
  CUdevResource rest = {};
  unsigned groups = 1;
  CUdevResourceDesc desc = nullptr;
  CUgreenCtx green = nullptr;
  if (current != primary) {
    failed = "the job's kernels run in a context it made, not the device's primary context";
  } else if ((r = x.cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM)) != CUDA_SUCCESS) {
    failed = "cuDeviceGetDevResource";
  } else if ((r = x.cuDevSmResourceSplitByCount(
                  &group, &groups, &all, &rest, 0,
                  static_cast<unsigned>(all.sm.smCount * SmPct() / 100))) != CUDA_SUCCESS ||
             groups != 1 || group.sm.smCount >= all.sm.smCount) {
    failed = "cuDevSmResourceSplitByCount";
  } else if ((r = x.cuDevResourceGenerateDesc(&desc, &group, 1)) != CUDA_SUCCESS) {
    failed = "cuDevResourceGenerateDesc";
  } else if ((r = x.cuGreenCtxCreate(&green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM)) !=
             CUDA_SUCCESS) {
    failed = "cuGreenCtxCreate";
  }
  // The green context holds its own reference to the primary context.
  x.cuDevicePrimaryCtxRelease(dev);
  if (failed != nullptr) {
    Warn(
        "GPU %d: no SM partition (%s, %d); beside a busy higher priority this job's kernels "
        "use every SM",
        device, failed, r);
    p.state.store(Partition::kNone, std::memory_order_release);
    return;
  }
  p.primary = primary;
  p.green = green;
  p.state.store(Partition::kReady, std::memory_order_release);
}

const Companion* Find(const Partition& p, CUstream user) {
  const int n = p.count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    if (p.companions[i].user == user) return &p.companions[i];
  }
  return nullptr;
}

// The companion of `user`, made on first use; nullptr when the table is full or the driver
// refused a stream or an event.
const Companion* CompanionOf(Partition& p, CUstream user) {
  if (const Companion* c = Find(p, user)) return c;
  MutexLock lock(p.mu);
  if (const Companion* c = Find(p, user)) return c;
  const int n = p.count.load(std::memory_order_relaxed);
  if (n == kMaxCompanions) return nullptr;
  Companion c;
  c.user = user;
  const DriverExtras& x = Extras();
  if (x.cuGreenCtxStreamCreate(&c.green, p.green, CU_STREAM_NON_BLOCKING, 0) != CUDA_SUCCESS ||
      x.cuEventCreate(&c.into, kEventDisableTiming) != CUDA_SUCCESS ||
      x.cuEventCreate(&c.back, kEventDisableTiming) != CUDA_SUCCESS) {
    return nullptr;  // what was made stays unused: at most once per stream
  }
  p.companions[n] = c;
  p.count.store(n + 1, std::memory_order_release);
  return &p.companions[n];
}

}  // namespace

bool SmPartition::Possible(int device) {
  return SmPct() != 0 && g_parts[device].state.load(std::memory_order_relaxed) != Partition::kNone;
}

Narrowed SmPartition::Enter(int device, CUstream stream, bool per_thread) {
  Partition& p = g_parts[device];
  if (p.state.load(std::memory_order_acquire) == Partition::kUntried) {
    MutexLock lock(p.mu);
    if (p.state.load(std::memory_order_relaxed) == Partition::kUntried) Make(p, device);
  }
  if (p.state.load(std::memory_order_acquire) != Partition::kReady) return {};
  const DriverExtras& x = Extras();
  CUcontext current = nullptr;
  if (x.cuCtxGetCurrent(&current) != CUDA_SUCCESS || current != p.primary) return {};
  if (stream == nullptr && per_thread) stream = CuStreamPerThread();
  const Companion* c = CompanionOf(p, stream);
  if (c == nullptr) return {};
  if (x.cuEventRecord(c->into, stream) != CUDA_SUCCESS ||
      x.cuStreamWaitEvent(c->green, c->into, 0) != CUDA_SUCCESS) {
    return {};
  }
  if (g_census_on) g_census_narrowed.fetch_add(1, std::memory_order_relaxed);
  return Narrowed{stream, c->green, c->back};
}

void SmPartition::Leave(const Narrowed& n) {
  if (n.green == nullptr) return;
  const DriverExtras& x = Extras();
  // Recorded after the launch on the companion; a later record only moves it further along
  // the companion, so the wait is never weaker than this launch (CUDA driver API,
  // cuStreamWaitEvent: it waits for the event's most recent record at the time of the call).
  if (x.cuEventRecord(n.back, n.green) == CUDA_SUCCESS) x.cuStreamWaitEvent(n.user, n.back, 0);
}

// In the fork child's atfork handler: the parent's green contexts and streams mean nothing.
void SmPartition::ResetAfterFork() NO_THREAD_SAFETY_ANALYSIS {
  for (Partition& p : g_parts) {
    p.mu.ReinitAfterFork();
    p.state.store(Partition::kUntried, std::memory_order_relaxed);
    p.primary = nullptr;
    p.green = nullptr;
    p.count.store(0, std::memory_order_relaxed);
  }
}

}  // namespace gshare::shim
