// PriorityWindow: bounds in GPU time the work a process keeps queued on a device while it
// yields to a higher-priority job there (priority_lane.h), so that when the higher job submits
// again its first kernel waits behind little (docs/design.md, "Priority lanes", bounded
// interference).
//
// Before each streamed submission (outside the gate) the process admits it: the GPU time of
// what it has queued and not yet completed, plus this submission's predicted time
// (kernel_costs.h), must fit the allowance: GSHARE_PRIORITY_INFLIGHT_US (default 150 µs; 0
// turns the window off) divided among the GPU's yielding processes, or, when the higher job
// published when it is expected back (quiet_forecast.h), their share of the rest of its gap
// if longer (time-sliced, their queued work together must end by its return; with several of
// them only part of the rest is filled, GSHARE_PRIORITY_GAP_FILL, DefaultGapFillPct). What
// does not fit waits for the oldest queued submission to complete; a submission that alone
// fits neither (a 3 ms GEMM near the end of a service's gap) waits for the start of the higher
// job's next gap (its busy bit clearing) and then goes, so long work runs where it disturbs
// least and is never starved. One such submission per gap on the GPU: the yielding processes
// take turns for gap starts (BoardSlot::gap_turn), since the service's next request would
// otherwise wait for all of theirs at once; in a gap whose turn is taken the others keep to the
// budget (the turn's submission fills the gap: time-sliced, their shares of it would run late
// by about its length). When the higher job is overdue by more than a
// gap, its forecast no longer holds and only the budget applies.
//
// An MPS client (priority_lane.h, ConcurrentLanes) is not stopped while the higher job is busy.
// Where its device has an SM partition (sm_partition.h) its kernel launches go there while the
// higher job is busy, and also while it is idle when what the client has queued on all SMs
// would run past the higher job's forecast return (the share of the rest of its gap, as above):
// the client fills the gaps on every SM and keeps running on part of them beside the higher
// job, never waiting for it; once the higher job is idle past its forecast the client runs on
// every SM with at most kWideIdleNs queued there. Without a partition (or for copies, graphs and
// cooperative launches) it keeps at most GSHARE_PRIORITY_CONCURRENT_US (default
// kDefaultConcurrentUs; 0: no bound) of GPU time queued while the higher job is busy, and nothing
// bounds it while it is idle. Narrow launches are not in the window's ring: its queued time is what
// runs on every SM.
//
// After the submission an event (with timing) is recorded behind it; when it completes, the
// time since the previous event on the same stream is the submission's GPU time, sampled only
// when it was queued behind that event (then the GPU went from one to the other); a
// submission made with nothing queued gets a marker event just before it for that. Costs: one
// cuEventRecord per submission (two when nothing was queued) and one cuEventQuery per
// completed one, paid by the yielding process only; the others' fast path is untouched. Any
// submitting thread (one lock per device, held only by threads of a yielding process); reset by the
// fork handler.
#pragma once

#include <cstdint>

#include "hooks/cuda_abi.h"

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

// What an MPS client with an SM partition keeps queued on every SM while the higher job is
// idle past its forecast, in ns of predicted GPU time: enough that the client's launches stay
// ahead of the GPU, short beside a request that finds it queued. Without this bound one
// training's run-ahead on every SM (hundreds of ms of queued kernels) met the service's next
// request and the open-loop service never caught up (p99 26 x alone; docs/benchmarks.md, "SM
// partition while the service is busy").
inline constexpr int64_t kWideIdleNs = 2'000'000;

inline WindowVerdict AdmitRule(const WindowView& v) {
  const bool forecast = v.quiet_until_ns > 0 && v.quiet_gap_ns > 0;
  const int64_t gap_share =
      (v.quiet_until_ns - v.now_ns) * v.gap_fill_pct / 100 / (v.sharers > 1 ? v.sharers : 1);
  if (v.concurrent && v.can_narrow) {
    if (v.higher_busy) return WindowVerdict::kSubmitNarrow;
    // Idle and expected back (the forecast holds): every SM only for work that ends by its
    // return (the filled share of the rest of its gap), the rest narrow.
    const bool holds = forecast && v.now_ns <= v.quiet_until_ns + v.quiet_gap_ns;
    if (holds) {
      return v.queued_ns + v.cost_ns <= gap_share ? WindowVerdict::kSubmit
                                                  : WindowVerdict::kSubmitNarrow;
    }
    // Overdue by more than a gap, or no forecast: every SM, with at most kWideIdleNs queued
    // there, so that its return waits behind little; the launch after it goes narrow.
    if (v.queued_ns + v.cost_ns <= kWideIdleNs || v.outstanding == 0) {
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

class PriorityWindow {
 public:
  // Before a streamed submission of shape `shape` on `device` by a yielding process, outside
  // the gate. True: submit now, on the SM partition when *narrow is set (only when
  // `can_narrow`: a kernel launch the partition can take). False: it waited (for queued work
  // or a gap's start); check the higher job again and call again. `waited_gap_start` is the
  // submission's own flag: set once it waited for a gap's start, after which it takes the
  // next free turn.
  static bool Admit(int device, uint64_t shape, gs_cuda::CUstream stream, bool per_thread,
                    bool can_narrow, bool* waited_gap_start, bool* narrow);
  // After that submission on `stream` (inside the gate, current context set). Never waits.
  static void AfterSubmission(int device, gs_cuda::CUstream stream, bool per_thread,
                              uint64_t shape);
  // After a submission that went to the SM partition instead: the next one on `stream` is not
  // a cost sample (the GPU ran the narrow one between them).
  static void AfterNarrow(int device, gs_cuda::CUstream stream, bool per_thread);
  static void ResetAfterFork();
};

}  // namespace gshare::shim
