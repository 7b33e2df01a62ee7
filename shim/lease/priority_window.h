// PriorityWindow: what a process that yields to a higher priority on a GPU keeps queued there,
// in predicted GPU time, and where its next submission goes: now, after the oldest queued one,
// at the higher job's next gap, or (an MPS client's kernel launch) on the SM partition.
// docs/design.md, "Priority lanes" (bounded interference) and "MPS backend" (the SM partition),
// has the rules and the numbers behind them; AdmitRule is the rule, PriorityWindows the state
// (rings of timed events per device) behind seams, PriorityWindow the shim's one instance.
// Costs: one cuEventRecord per submission (two when nothing was queued) and one cuEventQuery
// per completed one, paid by the yielding process only.
#pragma once

#include <atomic>
#include <cstdint>

#include "gshare/priority_board.h"
#include "driver/context_registry.h"
#include "driver/cuda_abi.h"
#include "driver/real_driver.h"
#include "lease/kernel_costs.h"
#include "lease/quiet_forecast.h"
#include "mutex.h"

namespace gshare::shim {

// What Admit decides; the pure rule, unit-tested.
// kTakeGapTurn: submit if this gap's turn can be taken (no other yielding process took it),
// else wait for the next gap's start. kSubmitNarrow: submit now on the SM partition.
enum class WindowVerdict { kSubmit, kWaitOldest, kWaitGapStart, kTakeGapTurn, kSubmitNarrow };

struct WindowView {
  int64_t queued_ns = 0;       // predicted GPU time of the queued, not completed submissions
  int outstanding = 0;         // how many they are
  int64_t cost_ns = 0;         // this submission's predicted GPU time
  int64_t budget_ns = 0;       // this process's share of GSHARE_PRIORITY_INFLIGHT_US
  int sharers = 1;             // the GPU's yielding processes: they share the rest of the gap too
  int64_t now_ns = 0;          // CLOCK_MONOTONIC
  int64_t quiet_until_ns = 0;  // the higher job's expected return; 0 unknown
  int64_t quiet_gap_ns = 0;    // its forecast gap; 0 unknown
  bool waited_gap_start = false;  // this submission already waited for a gap's start
  int gap_fill_pct = 100;         // of the rest of the gap the yielders fill together
  bool gap_turn_taken = false;    // a yielding process took this gap's turn (BoardSlot::gap_turn)
  // An MPS client (ConcurrentLanes): it runs beside the higher job rather than in its gaps.
  bool concurrent = false;
  bool higher_busy = false;          // a seat it yields to is busy now
  int64_t concurrent_budget_ns = 0;  // its share of GSHARE_PRIORITY_CONCURRENT_US; 0: no bound
  bool can_narrow = false;  // an MPS client's kernel launch its device's SM partition can take
  // It may queue work on the partition for the higher job's next busy period: turns to run
  // beside are unbounded (GSHARE_PRIORITY_BESIDE=0) or it holds one (beside_turns.h).
  bool beside_turn = true;
};

// The percentage of the rest of the higher job's gap that `sharers` yielding processes fill
// together by default: all of it for one; half for several, whose work, time-sliced between
// their contexts, ran past the higher job's return when they filled all of it (with three
// trainings beside a service the service's p99 was 1.33-1.49 x alone at 100 %, 0.87 x at
// 50 %, and the trainings starved at 0 %: docs/benchmarks.md, "Gap fill with several
// yielding processes").
//
// An MPS client with an SM partition fills none of it on every SM by default: it stays on its
// partition while the forecast holds and takes every SM only once the higher job is overdue.
// Beside a ResNet service (one training, one call) filling 100 % of the gap gave the service
// p99 1.41 x alone, 50 % 1.15 x, 0 % 1.04 x, and the training kept 73 %, 70 % and 70 % of its
// rate: the gaps' work on every SM ran into the service's return and bought the training
// little (docs/benchmarks.md, "SM partition while the service is busy").
inline int DefaultGapFillPct(int sharers, bool narrow = false) {
  if (narrow) return 0;
  return sharers > 1 ? 50 : 100;
}

// GSHARE_PRIORITY_CONCURRENT_US when unset: what an MPS client keeps queued, in µs of predicted
// GPU time, while a higher job is busy; 0: no bound (MPS client priority alone orders them).
inline constexpr long kDefaultConcurrentUs = 0;

// What the MPS clients with an SM partition on a GPU keep queued on every SM together while
// the higher job is idle past its forecast, in ns of predicted GPU time (each its share, as
// with the in-flight budget): enough that their launches stay ahead of the GPU, short beside
// a request that finds it queued. Without this bound one training's run-ahead on every SM
// (hundreds of ms of queued kernels) met the service's next request and the open-loop service
// never caught up (p99 26 x alone; docs/benchmarks.md, "SM partition while the service is
// busy").
inline constexpr int64_t kWideIdleNs = 2'000'000;

inline WindowVerdict AdmitRule(const WindowView& v) {
  const bool forecast = v.quiet_until_ns > 0 && v.quiet_gap_ns > 0;
  const int sharers = v.sharers > 1 ? v.sharers : 1;
  const int64_t gap_share = (v.quiet_until_ns - v.now_ns) * v.gap_fill_pct / 100 / sharers;
  if (v.concurrent && v.can_narrow) {
    if (v.higher_busy) return WindowVerdict::kSubmitNarrow;
    // Idle and expected back (the forecast holds): every SM only for work that ends by its
    // return (the filled share of the rest of its gap), the rest narrow.
    const bool holds = forecast && v.now_ns <= v.quiet_until_ns + v.quiet_gap_ns;
    if (holds) {
      if (v.queued_ns + v.cost_ns <= gap_share) return WindowVerdict::kSubmit;
      if (v.beside_turn) return WindowVerdict::kSubmitNarrow;
      // Without a turn nothing is queued for the busy period to come: what does not fit the
      // gap waits, as outside MPS.
      if (v.outstanding > 0) return WindowVerdict::kWaitOldest;
      return v.waited_gap_start ? WindowVerdict::kTakeGapTurn : WindowVerdict::kWaitGapStart;
    }
    // Overdue by more than a gap, or no forecast: every SM, with at most its share of
    // kWideIdleNs queued there, so that its return waits behind little.
    if (v.queued_ns + v.cost_ns <= kWideIdleNs / sharers || v.outstanding == 0) {
      return WindowVerdict::kSubmit;
    }
    return WindowVerdict::kWaitOldest;
  }
  if (v.concurrent) {
    // Under MPS the driver runs the higher job's blocks first (client priority): queued work
    // delays it only by the blocks on the SMs, so the bound holds only while it is busy.
    if (!v.higher_busy || v.concurrent_budget_ns == 0) return WindowVerdict::kSubmit;
    if (v.queued_ns + v.cost_ns <= v.concurrent_budget_ns) return WindowVerdict::kSubmit;
    return v.outstanding > 0 ? WindowVerdict::kWaitOldest : WindowVerdict::kSubmit;
  }
  int64_t allowance = v.budget_ns;
  // The long submission that took the gap's turn fills it: the rest of the gap is not shared
  // again, or the higher job's next request would find both queued.
  if (forecast && !v.gap_turn_taken && gap_share > allowance) allowance = gap_share;
  if (v.queued_ns + v.cost_ns <= allowance) return WindowVerdict::kSubmit;
  if (v.outstanding > 0) return WindowVerdict::kWaitOldest;
  // Alone it is longer than the budget and the rest of the gap.
  if (!forecast) return WindowVerdict::kSubmit;
  if (v.now_ns > v.quiet_until_ns + v.quiet_gap_ns) return WindowVerdict::kSubmit;  // overdue
  return v.waited_gap_start ? WindowVerdict::kTakeGapTurn : WindowVerdict::kWaitGapStart;
}

// What a window reads and waits on outside itself: the shim's lanes, board and driver
// (priority_window_shim.cc), or a unit test's fakes. Plain function pointers, so that the
// windows object stays constant-initialized.
struct WindowSeams {
  // cuCtxGetCurrent and the event calls (create, record, query, synchronize, elapsed time).
  const DriverExtras& (*driver)();
  int64_t (*now_ns)();                    // CLOCK_MONOTONIC
  proto::BoardSlot* (*slot)(int device);  // the GPU's board slot; nullptr: none mapped
  uint32_t (*yielders)(int device);       // the GPU's yielding processes (the budget's share)
  bool (*higher_busy)(int device);        // a seat this process yields to is busy
  bool (*concurrent)(int device);         // runs beside busy higher seats (ConcurrentOn)
  bool (*can_narrow)(int device);         // an SM partition may take launches (sm_partition.h)
  // Takes one of the turns to run beside a busy higher seat, if it holds none and one is free
  // (beside_turns.h); true: held, taken, or the turns are unbounded.
  bool (*take_beside_turn)(int device);
  // Sleeps until the higher job's next gap starts (its busy bits clear), at most until `q`
  // is overdue and never past 1 s; the time counts as held back.
  void (*wait_gap_start)(int device, const QuietSpell& q);
};

// The windows of one process, a ring per device. The environment's budgets
// (GSHARE_PRIORITY_INFLIGHT_US, _CONCURRENT_US, _GAP_FILL) are read at first use. Any
// submitting thread (one lock per device, held only by threads of a yielding process).
class PriorityWindows {
 public:
  constexpr explicit PriorityWindows(const WindowSeams* seams) : seams_(seams) {}

  // Before a streamed submission of shape `shape` on `device` by a yielding process, outside
  // the gate. True: submit now, on the SM partition when *narrow is set (only when
  // `can_narrow`: a kernel launch the partition can take). False: it waited (for queued work
  // or a gap's start); check the higher job again and call again. `waited_gap_start` is the
  // submission's own flag: set once it waited for a gap's start, after which it takes the
  // next free turn.
  bool Admit(int device, uint64_t shape, gs_cuda::CUstream stream, bool per_thread, bool can_narrow,
             bool* waited_gap_start, bool* narrow);
  // After that submission on `stream` (inside the gate, current context set). Never waits.
  void AfterSubmission(int device, gs_cuda::CUstream stream, bool per_thread, uint64_t shape);
  // After a submission that went to the SM partition instead: the next one on `stream` is not
  // a cost sample (the GPU ran the narrow one between them).
  void AfterNarrow(int device, gs_cuda::CUstream stream, bool per_thread);
  // The learnt GPU time of `shape` on `device` (kernel_costs.h), in ns; 0: none sampled.
  int64_t PredictedNs(int device, uint64_t shape);
  // Submissions queued and not known to be complete on `device`, and their predicted GPU time.
  int Outstanding(int device);
  int64_t QueuedNs(int device);
  // In a forked child (atfork handler; its only thread): the parent's events mean nothing.
  void Reset();

  // Events in a ring; at most kRing - 2 are outstanding, so that the event before the oldest
  // outstanding one (the start of its sample) is not recorded again before it is read.
  static constexpr int kRing = 64;
  static constexpr int kMaxOutstanding = kRing - 2;

 private:
  struct Queued {
    uint64_t shape = 0;
    int64_t cost_ns = 0;  // as predicted when it was admitted
    gs_cuda::CUstream stream = nullptr;
    bool sampled = false;   // queued behind the previous event on its stream: a sample
    bool marker = false;    // an event recorded just before a submission made with nothing queued
    bool narrowed = false;  // a narrow launch on its stream followed it (AfterNarrow)
  };
  struct Ring {
    Mutex mu;
    gs_cuda::CUcontext ctx GUARDED_BY(mu) = nullptr;  // the events' context; others not windowed
    gs_cuda::CUevent events[kRing] GUARDED_BY(mu) = {};
    Queued queued[kRing] GUARDED_BY(mu) = {};
    int head GUARDED_BY(mu) = 0;   // oldest outstanding
    int count GUARDED_BY(mu) = 0;  // outstanding
    int64_t queued_ns GUARDED_BY(mu) = 0;
    KernelCosts costs GUARDED_BY(mu);
  };
  int64_t CostOf(const Ring& r, uint64_t shape, int64_t budget) REQUIRES(r.mu);
  void Retire(Ring& r) REQUIRES(r.mu);
  void RetireCompleted(Ring& r) REQUIRES(r.mu);
  void MarkStart(Ring& r, gs_cuda::CUstream stream, bool per_thread) REQUIRES(r.mu);
  int64_t ShareOfBudgetNs(std::atomic<int64_t>& cache, const char* name, long default_us,
                          int device);
  int GapFillPct(int sharers, bool narrow);

  const WindowSeams* const seams_;
  std::atomic<int64_t> budget_ns_{-1};      // GSHARE_PRIORITY_INFLIGHT_US in ns; -1: not read
  std::atomic<int64_t> concurrent_ns_{-1};  // GSHARE_PRIORITY_CONCURRENT_US
  std::atomic<int> gap_fill_{-2};           // GSHARE_PRIORITY_GAP_FILL; -1 unset, -2 not read
  Ring rings_[kMaxDevices];
};

// The shim's windows over its lanes and the real driver (priority_window_shim.cc).
class PriorityWindow {
 public:
  static bool Admit(int device, uint64_t shape, gs_cuda::CUstream stream, bool per_thread,
                    bool can_narrow, bool* waited_gap_start, bool* narrow);
  static void AfterSubmission(int device, gs_cuda::CUstream stream, bool per_thread,
                              uint64_t shape);
  static void AfterNarrow(int device, gs_cuda::CUstream stream, bool per_thread);
  static void ResetAfterFork();
};

}  // namespace gshare::shim
