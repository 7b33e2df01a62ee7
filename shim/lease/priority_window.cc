// The priority window: per device, a ring of timed events behind the queued submissions of a
// process that yields, their predicted costs, and the learnt costs by shape.
#include "lease/priority_window.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>

#include "hooks/context_registry.h"
#include "hooks/real_driver.h"
#include "lease/event_ring.h"
#include "lease/kernel_costs.h"
#include "lease/lease_state.h"
#include "lease/priority_lane.h"
#include "lease/quiet_forecast.h"
#include "lease/sm_partition.h"
#include "memory/vmm_driver.h"
#include "mutex.h"

namespace gshare::shim {
namespace {

using namespace gs_cuda;

// Events in the ring; at most kRing - 2 are outstanding, so that the event before the oldest
// outstanding one (the start of its sample) is not recorded again before it is read.
constexpr int kRing = 64;
constexpr int kMaxOutstanding = kRing - 2;

struct Queued {
  uint64_t shape = 0;
  int64_t cost_ns = 0;  // as predicted when it was admitted
  CUstream stream = nullptr;
  bool sampled = false;   // queued behind the previous event on its stream: a sample
  bool marker = false;    // an event recorded just before a submission made with nothing queued
  bool narrowed = false;  // a narrow launch on its stream followed it (AfterNarrow)
};

struct Ring {
  Mutex mu;
  CUcontext ctx GUARDED_BY(mu) = nullptr;  // the events' context; other contexts are not windowed
  CUevent events[kRing] GUARDED_BY(mu) = {};
  Queued queued[kRing] GUARDED_BY(mu) = {};
  int head GUARDED_BY(mu) = 0;   // oldest outstanding
  int count GUARDED_BY(mu) = 0;  // outstanding
  int64_t queued_ns GUARDED_BY(mu) = 0;
  KernelCosts costs GUARDED_BY(mu);
};

Ring g_rings[kMaxDevices];
// `device`'s yielding processes' share of the GPU time in the environment variable `name`
// (µs; unset: `default_us`; 0 or less: no bound), read once into `cache` (-1: not read yet).
int64_t ShareOfBudgetNs(std::atomic<int64_t>& cache, const char* name, long default_us,
                        int device) {
  int64_t b = cache.load(std::memory_order_relaxed);
  if (b < 0) {
    const char* env = std::getenv(name);
    long us = env != nullptr ? std::atol(env) : default_us;
    b = us <= 0 ? 0 : static_cast<int64_t>(us) * 1000;
    cache.store(b, std::memory_order_relaxed);
  }
  return b / g_lanes[device].yielders.load(std::memory_order_relaxed);
}

std::atomic<int64_t> g_budget_ns{-1};
int64_t BudgetNs(int device) {
  return ShareOfBudgetNs(g_budget_ns, "GSHARE_PRIORITY_INFLIGHT_US", 150, device);
}

std::atomic<int64_t> g_concurrent_ns{-1};
int64_t ConcurrentBudgetNs(int device) {
  return ShareOfBudgetNs(g_concurrent_ns, "GSHARE_PRIORITY_CONCURRENT_US", kDefaultConcurrentUs,
                         device);
}

// GSHARE_PRIORITY_GAP_FILL: the percentage of the rest of the higher job's gap the yielding
// processes may fill together, 0..100 (0: the budget and the gap turns only); unset:
// DefaultGapFillPct (which differs for a launch that may go to the SM partition).
int GapFillPct(int sharers, bool narrow) {
  static const int pct = [] {
    const char* env = std::getenv("GSHARE_PRIORITY_GAP_FILL");
    if (env == nullptr || *env == '\0') return -1;
    long v = std::atol(env);
    return static_cast<int>(v < 0 ? 0 : v > 100 ? 100 : v);
  }();
  return pct >= 0 ? pct : DefaultGapFillPct(sharers, narrow);
}

int64_t CostOf(const Ring& r, uint64_t shape, int64_t budget) REQUIRES(r.mu) {
  int64_t cost = r.costs.Predict(shape);
  if (cost == 0) cost = r.costs.MeanNs();
  return cost > 0 ? cost : budget;  // nothing learnt yet: one submission at a time
}

// Retires the oldest outstanding submission, whose event has completed; samples its cost.
void Retire(Ring& r) REQUIRES(r.mu) {
  const Queued& q = r.queued[r.head];
  if (q.sampled) {
    float ms = 0;
    const CUevent before = r.events[(r.head + kRing - 1) % kRing];
    if (Extras().cuEventElapsedTime != nullptr &&
        Extras().cuEventElapsedTime(&ms, before, r.events[r.head]) == CUDA_SUCCESS && ms > 0) {
      r.costs.Sample(q.shape, static_cast<int64_t>(ms * 1e6));
    }
  }
  r.queued_ns -= q.cost_ns;
  r.head = (r.head + 1) % kRing;
  --r.count;
}

// Retires the submissions the GPU has completed, without waiting.
void RetireCompleted(Ring& r) REQUIRES(r.mu) {
  while (r.count > 0 && Extras().cuEventQuery(r.events[r.head]) == CUDA_SUCCESS) Retire(r);
}

// Sleeps until the higher job's busy bits clear once more (the start of its next gap), at
// most until its forecast is overdue (never past 1 s).
void WaitForGapStart(int device, const QuietSpell& q) {
  Lane& l = g_lanes[device];
  proto::BoardSlot* slot = l.slot.load(std::memory_order_acquire);
  if (slot == nullptr) return;
  const uint32_t seq = slot->idle_seq.load(std::memory_order_acquire);
  int64_t wait = q.until_ns + q.gap_ns - lease::NowNs();
  if (wait <= 0) return;
  if (wait > 1'000'000'000) wait = 1'000'000'000;
  const int64_t started = lease::NowNs();
  struct timespec ts = {static_cast<time_t>(wait / 1'000'000'000),
                        static_cast<long>(wait % 1'000'000'000)};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&slot->idle_seq), FUTEX_WAIT, seq, &ts, nullptr,
          0);
  l.held_ns.fetch_add(lease::NowNs() - started, std::memory_order_relaxed);
}

// Takes the turn of the gap under way (the slot's idle_seq) for a long submission; false when
// another yielding process took it.
bool TakeGapTurn(proto::BoardSlot* slot) {
  if (slot == nullptr) return true;
  const uint32_t gap = slot->idle_seq.load(std::memory_order_acquire);
  uint32_t taken = slot->gap_turn.load(std::memory_order_relaxed);
  return taken != gap &&
         slot->gap_turn.compare_exchange_strong(taken, gap, std::memory_order_acq_rel);
}

// Records a marker event on the submission's stream when nothing is queued, so that the
// submission after it is sampled too (the GPU reaches the marker just before starting it).
void MarkStart(Ring& r, CUstream stream, bool per_thread) REQUIRES(r.mu) {
  CUcontext ctx;
  if (r.count != 0 || !SubmittingContext(&ctx, &stream, per_thread) || ctx != r.ctx) return;
  const int slot = r.head;
  if (Extras().cuEventRecord(r.events[slot], stream) != CUDA_SUCCESS) return;
  r.queued[slot] = Queued{0, 0, stream, false, true};
  ++r.count;
}

}  // namespace

bool PriorityWindow::Admit(int device, uint64_t shape, CUstream stream, bool per_thread,
                           bool can_narrow, bool* waited_gap_start, bool* narrow) {
  const int64_t budget = BudgetNs(device);
  if (budget == 0) return true;
  Ring& r = g_rings[device];
  proto::BoardSlot* slot = g_lanes[device].slot.load(std::memory_order_acquire);
  r.mu.Lock();
  if (r.ctx == nullptr) {  // no events yet: AfterSubmission makes them
    r.mu.Unlock();
    return true;
  }
  RetireCompleted(r);
  WindowView v;
  v.queued_ns = r.queued_ns;
  v.outstanding = r.count;
  v.cost_ns = CostOf(r, shape, budget);
  v.budget_ns = budget;
  v.sharers = static_cast<int>(g_lanes[device].yielders.load(std::memory_order_relaxed));
  v.now_ns = lease::NowNs();
  QuietSpell q;
  if (slot != nullptr) q = ReadQuiet(*slot);
  v.quiet_until_ns = q.until_ns;
  v.quiet_gap_ns = q.gap_ns;
  v.waited_gap_start = *waited_gap_start;
  v.gap_turn_taken = slot != nullptr && slot->gap_turn.load(std::memory_order_relaxed) ==
                                            slot->idle_seq.load(std::memory_order_acquire);
  v.concurrent = ConcurrentLanes();
  if (v.concurrent) {
    v.higher_busy = HigherBusy(device);
    v.concurrent_budget_ns = ConcurrentBudgetNs(device);
    v.can_narrow = can_narrow && SmPartition::Possible(device);
  }
  v.gap_fill_pct = GapFillPct(v.sharers, v.can_narrow);
  WindowVerdict verdict = AdmitRule(v);
  if (verdict == WindowVerdict::kSubmit && r.count >= kMaxOutstanding) {
    verdict = WindowVerdict::kWaitOldest;
  }
  switch (verdict) {
    case WindowVerdict::kSubmitNarrow:
      r.mu.Unlock();
      *narrow = true;
      return true;
    case WindowVerdict::kSubmit:
      MarkStart(r, stream, per_thread);
      r.mu.Unlock();
      return true;
    case WindowVerdict::kWaitOldest:
      Extras().cuEventSynchronize(r.events[r.head]);
      Retire(r);
      r.mu.Unlock();
      return false;
    case WindowVerdict::kTakeGapTurn:
      if (TakeGapTurn(slot)) {
        MarkStart(r, stream, per_thread);
        r.mu.Unlock();
        return true;
      }
      [[fallthrough]];  // another yielding process has this gap: the next one
    case WindowVerdict::kWaitGapStart:
      r.mu.Unlock();
      *waited_gap_start = true;
      WaitForGapStart(device, q);
      return false;
  }
  r.mu.Unlock();
  return true;
}

void PriorityWindow::AfterSubmission(int device, CUstream stream, bool per_thread, uint64_t shape) {
  const int64_t budget = BudgetNs(device);
  if (budget == 0) return;
  CUcontext ctx;
  if (!SubmittingContext(&ctx, &stream, per_thread)) return;
  Ring& r = g_rings[device];
  r.mu.Lock();
  if (EnsureEvents(&r.ctx, r.events, kRing, ctx, /*timing=*/true)) {
    RetireCompleted(r);
    if (r.count < kRing - 1) {
      const int slot = (r.head + r.count) % kRing;
      // Queued behind the process's previous event on this stream, still pending (or a
      // marker recorded just before it): the GPU goes from that event to this one's, so
      // their distance is this one's time.
      const Queued& prev = r.queued[(slot + kRing - 1) % kRing];
      const bool sampled = prev.stream == stream && !prev.narrowed && (r.count > 0 || prev.marker);
      if (Extras().cuEventRecord(r.events[slot], stream) == CUDA_SUCCESS) {
        const int64_t cost = CostOf(r, shape, budget);
        r.queued[slot] = Queued{shape, cost, stream, sampled};
        r.queued_ns += cost;
        ++r.count;
      }
    }
  }
  r.mu.Unlock();
}

void PriorityWindow::AfterNarrow(int device, CUstream stream, bool per_thread) {
  if (stream == nullptr && per_thread) stream = CuStreamPerThread();
  Ring& r = g_rings[device];
  MutexLock lock(r.mu);
  if (r.count == 0) return;  // nothing queued: the next wide one is marked, not chained
  Queued& last = r.queued[(r.head + r.count - 1) % kRing];
  if (last.stream == stream) last.narrowed = true;
}

// In the fork child's atfork handler: its only thread writes the rings without their locks.
void PriorityWindow::ResetAfterFork() NO_THREAD_SAFETY_ANALYSIS {
  for (Ring& r : g_rings) {
    r.mu.ReinitAfterFork();
    r.ctx = nullptr;  // the parent's events mean nothing here
    r.head = r.count = 0;
    r.queued_ns = 0;
    r.costs = KernelCosts();
  }
}

}  // namespace gshare::shim
