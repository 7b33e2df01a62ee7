// The priority window: a ring of events per device, used only while the process yields.
#include "lease/priority_window.h"

#include <cstdlib>

#include "hooks/context_registry.h"
#include "hooks/real_driver.h"
#include "lease/event_ring.h"
#include "lease/lease_state.h"
#include "lease/priority_lane.h"
#include "memory/vmm_driver.h"
#include "mutex.h"

namespace gshare::shim {
namespace {

using namespace gs_cuda;

constexpr int kRing = 64;  // events outstanding at most, whatever the budget
constexpr int64_t kMaxSampleNs = 100'000'000;

struct Ring {
  Mutex mu;
  CUcontext ctx GUARDED_BY(mu) = nullptr;  // the events' context; other contexts are not windowed
  CUevent events[kRing] GUARDED_BY(mu) = {};
  int head GUARDED_BY(mu) = 0;         // oldest outstanding
  int count GUARDED_BY(mu) = 0;        // outstanding
  int64_t mean_ns GUARDED_BY(mu) = 0;  // 0: no sample yet (one submission queued at most)
  // When the last wait for an event returned, and whether the event after it is the next one
  // to be waited for (then the time between the two waits is a sample).
  int64_t last_wait_ns GUARDED_BY(mu) = 0;
  bool chained GUARDED_BY(mu) = false;
};

Ring g_rings[kMaxDevices];
std::atomic<int64_t> g_budget_ns{-1};

int64_t BudgetNs() {
  int64_t b = g_budget_ns.load(std::memory_order_relaxed);
  if (b >= 0) return b;
  const char* env = std::getenv("GSHARE_PRIORITY_INFLIGHT_US");
  long us = env != nullptr ? std::atol(env) : 500;
  b = us <= 0 ? 0 : static_cast<int64_t>(us) * 1000;
  g_budget_ns.store(b, std::memory_order_relaxed);
  return b;
}

// Retires the oldest event; `waited`: the thread waited for it (a sample may be taken).
void Retire(Ring& r, bool waited) REQUIRES(r.mu) {
  r.head = (r.head + 1) % kRing;
  --r.count;
  if (!waited) {
    r.chained = false;
    return;
  }
  int64_t now = lease::NowNs();
  if (r.chained) {
    int64_t sample = now - r.last_wait_ns;
    if (sample > kMaxSampleNs) sample = kMaxSampleNs;
    // A wait that spanned a higher job's burst (the GPU time-sliced them) is not this
    // submission's length: outliers count as at most 4 times the mean.
    if (r.mean_ns > 0 && sample > 4 * r.mean_ns) sample = 4 * r.mean_ns;
    r.mean_ns = r.mean_ns == 0 ? sample : r.mean_ns + (sample - r.mean_ns) / 8;
    if (r.mean_ns < 1000) r.mean_ns = 1000;
  }
  r.last_wait_ns = now;
  r.chained = true;
}

}  // namespace

void PriorityWindow::AfterSubmission(int device, CUstream stream, bool per_thread) {
  const int64_t budget = BudgetNs() / g_lanes[device].yielders.load(std::memory_order_relaxed);
  if (budget == 0) return;
  const DriverExtras& x = Extras();
  CUcontext ctx;
  if (!SubmittingContext(&ctx, &stream, per_thread)) return;
  Ring& r = g_rings[device];
  r.mu.Lock();
  if (EnsureEvents(&r.ctx, r.events, kRing, ctx)) {
    // Events the GPU has passed leave without a wait (and without a sample).
    while (r.count > 0 && x.cuEventQuery(r.events[r.head]) == CUDA_SUCCESS) Retire(r, false);
    if (r.count == kRing) {
      x.cuEventSynchronize(r.events[r.head]);
      Retire(r, true);
    }
    if (x.cuEventRecord(r.events[(r.head + r.count) % kRing], stream) == CUDA_SUCCESS) ++r.count;
    int64_t depth = r.mean_ns == 0 ? 1 : budget / r.mean_ns;
    if (depth < 1) depth = 1;
    while (r.count > depth) {
      x.cuEventSynchronize(r.events[r.head]);
      Retire(r, true);
    }
  }
  r.mu.Unlock();
}

// In the fork child's atfork handler: its only thread writes the rings without their locks.
void PriorityWindow::ResetAfterFork() NO_THREAD_SAFETY_ANALYSIS {
  for (Ring& r : g_rings) {
    r.mu.ReinitAfterFork();
    r.ctx = nullptr;  // the parent's events mean nothing here
    r.head = r.count = 0;
    r.mean_ns = 0;
    r.chained = false;
  }
}

}  // namespace gshare::shim
