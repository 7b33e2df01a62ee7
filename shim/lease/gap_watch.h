// Gap watch: the shim's side of phase staggering in shared mode (src/policy/stagger.h):
// measures the process's idle gaps for the daemon and stretches one when asked. What is
// declared here: any thread, lock-free; the lease thread's side is in lease_state.h.
//
// While the daemon watches a GPU (kGapWatch), each idle gap of the process on it is
// measured to the microsecond and reported (kGapReport): a gap begins when a synchronizing
// call returns (cuCtxSynchronize, cuStreamSynchronize, cuEventSynchronize: the process
// waited for its GPU work) and ends at the next submission. Gaps shorter than kMinGapNs are
// not reported. The lease thread sends the latest gap at its tick (every 20 ms), so a
// process with gaps closer than that reports some of them.
//
// A stretch (kStretchGap, `ms`) makes the process's next gap last at least `ms`: the next
// synchronizing call to return closes the gate (without draining), and the first
// submission after it waits in the slow path until `ms` after that return. A release
// cancels both.
//
// Cost: the submission fast path is unchanged (the gate's activity flag, already read,
// tells the first submission after a gap); a returning synchronizing call reads two atomic
// words, and only while watched takes the clock and clears the activity flags.
#pragma once

#include <atomic>
#include <cstdint>

#include "gshare/protocol.h"

namespace gshare::shim {

// Bit d: device ordinal d is watched / its next gap is to be stretched. Relaxed; any thread.
extern std::atomic<uint64_t> g_gap_watch;
extern std::atomic<uint64_t> g_stretch_due;

// A synchronizing call returned: a gap may begin. Any thread.
void GapBegins();
// The first submission on `device` since its gate's activity flag was cleared. Any thread.
void GapEnds(int device);

inline void AfterSync() {
  if (__builtin_expect((g_gap_watch.load(std::memory_order_relaxed) |
                        g_stretch_due.load(std::memory_order_relaxed)) != 0,
                       0)) {
    GapBegins();
  }
}

namespace lease {

inline constexpr int64_t kMinGapNs = 1'000'000;  // 1 ms

// In a forked child (async-signal-safe: atomic stores only): nothing watched or due.
void ResetGapWatchAfterFork();
// The lease thread's side (SendGap, HandleGapWatch, HandleStretch, StopGapWatch,
// WaitStretch) is declared in lease_state.h, next to the lock it needs.

}  // namespace lease
}  // namespace gshare::shim
