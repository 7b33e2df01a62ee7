// PriorityWindow: bounds in GPU time the work a process keeps queued on a device while it
// yields to a higher-priority job there (priority_lane.h), so that when the higher job submits
// again its first kernel waits behind little: about GSHARE_PRIORITY_INFLIGHT_US of work
// (default 500 µs; 0 turns the window off), shared by the processes that yield on the GPU
// (each keeps that budget divided by their number, as the daemon counts them).
//
// After each streamed submission an event is recorded after it; with more events outstanding
// than budget / (the mean duration of one submission), the submitting thread waits for the
// oldest. The duration is measured on the host, without GPU timers: when the thread waited
// for two consecutive events, the time between the two waits' returns is the GPU time of the
// submissions between them (the GPU was busy with them throughout, since the later one was
// queued before the earlier finished), an outlier (a wait across a higher job's burst) counted
// as at most 4 times the mean. A moving mean (1/8 weight) of those samples per
// submission; before the first sample, one submission is queued at most. A single kernel longer
// than the budget is still one submission: the window bounds how many are queued, not how long each
// is (the driver's time-slicing between contexts bounds that). Any submitting thread (one lock per
// device, held only by threads of a yielding process); reset by the fork handler.
#pragma once

#include "hooks/cuda_abi.h"

namespace gshare::shim {

class PriorityWindow {
 public:
  // After a submission on `stream` (inside the gate, current context set).
  static void AfterSubmission(int device, gs_cuda::CUstream stream, bool per_thread);
  static void ResetAfterFork();
};

}  // namespace gshare::shim
