// PriorityWindows (priority_window.h): per device, a ring of timed events behind the queued
// submissions of a process that yields, their predicted costs, and the learnt costs by shape.
// Reaches the driver, the clock and the board only through its seams (compiled into the unit
// tests as it is).
#include "lease/priority_window.h"

#include <cstdlib>

#include "lease/event_ring.h"

namespace gshare::shim {

using namespace gs_cuda;

namespace {

// Takes the turn of the gap under way (the slot's idle_seq) for a long submission; false when
// another yielding process took it.
bool TakeGapTurn(proto::BoardSlot* slot) {
  if (slot == nullptr) return true;
  const uint32_t gap = slot->idle_seq.load(std::memory_order_acquire);
  uint32_t taken = slot->gap_turn.load(std::memory_order_relaxed);
  return taken != gap &&
         slot->gap_turn.compare_exchange_strong(taken, gap, std::memory_order_acq_rel);
}

}  // namespace

// `device`'s yielding processes' share of the GPU time in the environment variable `name`
// (µs; unset: `default_us`; 0 or less: no bound), read once into `cache` (-1: not read yet).
int64_t PriorityWindows::ShareOfBudgetNs(std::atomic<int64_t>& cache, const char* name,
                                         long default_us, int device) {
  int64_t b = cache.load(std::memory_order_relaxed);
  if (b < 0) {
    const char* env = std::getenv(name);
    long us = env != nullptr ? std::atol(env) : default_us;
    b = us <= 0 ? 0 : static_cast<int64_t>(us) * 1000;
    cache.store(b, std::memory_order_relaxed);
  }
  const uint32_t sharers = seams_->yielders(device);
  return b / (sharers > 0 ? sharers : 1);
}

// GSHARE_PRIORITY_GAP_FILL: the percentage of the rest of the higher job's gap the yielding
// processes may fill together, 0..100 (0: the budget and the gap turns only); unset:
// DefaultGapFillPct (which differs for a launch that may go to the SM partition).
int PriorityWindows::GapFillPct(int sharers, bool narrow) {
  int pct = gap_fill_.load(std::memory_order_relaxed);
  if (pct == -2) {
    const char* env = std::getenv("GSHARE_PRIORITY_GAP_FILL");
    if (env == nullptr || *env == '\0') {
      pct = -1;
    } else {
      long v = std::atol(env);
      pct = static_cast<int>(v < 0 ? 0 : v > 100 ? 100 : v);
    }
    gap_fill_.store(pct, std::memory_order_relaxed);
  }
  return pct >= 0 ? pct : DefaultGapFillPct(sharers, narrow);
}

int64_t PriorityWindows::CostOf(const Ring& r, uint64_t shape, int64_t budget) {
  int64_t cost = r.costs.Predict(shape);
  if (cost == 0) cost = r.costs.MeanNs();
  return cost > 0 ? cost : budget;  // nothing learnt yet: one submission at a time
}

// Retires the oldest outstanding submission, whose event has completed; samples its cost.
void PriorityWindows::Retire(Ring& r) {
  const DriverExtras& x = seams_->driver();
  const Queued& q = r.queued[r.head];
  if (q.sampled) {
    float ms = 0;
    const CUevent before = r.events[(r.head + kRing - 1) % kRing];
    if (x.cuEventElapsedTime != nullptr &&
        x.cuEventElapsedTime(&ms, before, r.events[r.head]) == CUDA_SUCCESS && ms > 0) {
      r.costs.Sample(q.shape, static_cast<int64_t>(ms * 1e6));
    }
  }
  r.queued_ns -= q.cost_ns;
  r.head = (r.head + 1) % kRing;
  --r.count;
}

// Retires the submissions the GPU has completed, without waiting.
void PriorityWindows::RetireCompleted(Ring& r) {
  const DriverExtras& x = seams_->driver();
  while (r.count > 0 && x.cuEventQuery(r.events[r.head]) == CUDA_SUCCESS) Retire(r);
}

// Records a marker event on the submission's stream when nothing is queued, so that the
// submission after it is sampled too (the GPU reaches the marker just before starting it).
void PriorityWindows::MarkStart(Ring& r, CUstream stream, bool per_thread) {
  const DriverExtras& x = seams_->driver();
  CUcontext ctx;
  if (r.count != 0 || !SubmittingContext(x, &ctx, &stream, per_thread) || ctx != r.ctx) return;
  const int slot = r.head;
  if (x.cuEventRecord(r.events[slot], stream) != CUDA_SUCCESS) return;
  r.queued[slot] = Queued{0, 0, stream, false, true};
  ++r.count;
}

bool PriorityWindows::Admit(int device, uint64_t shape, CUstream stream, bool per_thread,
                            bool can_narrow, bool* waited_gap_start, bool* narrow) {
  const int64_t budget = ShareOfBudgetNs(budget_ns_, "GSHARE_PRIORITY_INFLIGHT_US", 150, device);
  if (budget == 0) return true;
  Ring& r = rings_[device];
  proto::BoardSlot* slot = seams_->slot(device);
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
  v.sharers = static_cast<int>(seams_->yielders(device));
  v.now_ns = seams_->now_ns();
  QuietSpell q;
  if (slot != nullptr) q = ReadQuiet(*slot);
  v.quiet_until_ns = q.until_ns;
  v.quiet_gap_ns = q.gap_ns;
  v.waited_gap_start = *waited_gap_start;
  v.gap_turn_taken = slot != nullptr && slot->gap_turn.load(std::memory_order_relaxed) ==
                                            slot->idle_seq.load(std::memory_order_acquire);
  v.concurrent = seams_->concurrent(device);
  if (v.concurrent) {
    v.higher_busy = seams_->higher_busy(device);
    v.concurrent_budget_ns = ShareOfBudgetNs(concurrent_ns_, "GSHARE_PRIORITY_CONCURRENT_US",
                                             kDefaultConcurrentUs, device);
    v.can_narrow = can_narrow && seams_->can_narrow(device);
  }
  v.gap_fill_pct = GapFillPct(v.sharers, v.can_narrow);
  WindowVerdict verdict = AdmitRule(v);
  // Work queued on the partition in a gap runs beside the busy period to come: it takes a
  // turn, only when it needs one (a client that fills the gap alone leaves the turns free).
  if (verdict == WindowVerdict::kSubmitNarrow && !v.higher_busy &&
      !seams_->take_beside_turn(device)) {
    v.beside_turn = false;
    verdict = AdmitRule(v);
  }
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
      seams_->driver().cuEventSynchronize(r.events[r.head]);
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
      seams_->wait_gap_start(device, q);
      return false;
  }
  r.mu.Unlock();
  return true;
}

void PriorityWindows::AfterSubmission(int device, CUstream stream, bool per_thread,
                                      uint64_t shape) {
  const int64_t budget = ShareOfBudgetNs(budget_ns_, "GSHARE_PRIORITY_INFLIGHT_US", 150, device);
  if (budget == 0) return;
  const DriverExtras& x = seams_->driver();
  CUcontext ctx;
  if (!SubmittingContext(x, &ctx, &stream, per_thread)) return;
  Ring& r = rings_[device];
  MutexLock lock(r.mu);
  if (!EnsureEvents(x, &r.ctx, r.events, kRing, ctx, /*timing=*/true)) return;
  RetireCompleted(r);
  if (r.count >= kRing - 1) return;
  const int slot = (r.head + r.count) % kRing;
  // Queued behind the process's previous event on this stream, still pending (or a marker
  // recorded just before it): the GPU goes from that event to this one's, so their distance
  // is this one's time.
  const Queued& prev = r.queued[(slot + kRing - 1) % kRing];
  const bool sampled = prev.stream == stream && !prev.narrowed && (r.count > 0 || prev.marker);
  if (x.cuEventRecord(r.events[slot], stream) == CUDA_SUCCESS) {
    const int64_t cost = CostOf(r, shape, budget);
    r.queued[slot] = Queued{shape, cost, stream, sampled};
    r.queued_ns += cost;
    ++r.count;
  }
}

void PriorityWindows::AfterNarrow(int device, CUstream stream, bool per_thread) {
  if (stream == nullptr && per_thread) stream = CuStreamPerThread();
  Ring& r = rings_[device];
  MutexLock lock(r.mu);
  if (r.count == 0) return;  // nothing queued: the next wide one is marked, not chained
  Queued& last = r.queued[(r.head + r.count - 1) % kRing];
  if (last.stream == stream) last.narrowed = true;
}

int64_t PriorityWindows::PredictedNs(int device, uint64_t shape) {
  Ring& r = rings_[device];
  MutexLock lock(r.mu);
  return r.costs.Predict(shape);
}

int PriorityWindows::Outstanding(int device) {
  Ring& r = rings_[device];
  MutexLock lock(r.mu);
  return r.count;
}

int64_t PriorityWindows::QueuedNs(int device) {
  Ring& r = rings_[device];
  MutexLock lock(r.mu);
  return r.queued_ns;
}

// In the fork child's atfork handler: its only thread writes the rings without their locks.
void PriorityWindows::Reset() NO_THREAD_SAFETY_ANALYSIS {
  for (Ring& r : rings_) {
    r.mu.ReinitAfterFork();
    r.ctx = nullptr;  // the parent's events mean nothing here
    r.head = r.count = 0;
    r.queued_ns = 0;
    r.costs = KernelCosts();
  }
}

}  // namespace gshare::shim
