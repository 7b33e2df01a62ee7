// GapPredictor: how long a lease holder's idle gaps last (its CPU phases: data loading,
// logging, evaluation on the host), to decide whether giving the GPU away at the start of a
// gap pays for the two handoffs it costs (out now, back when the gap ends).
//
// A gap is a time with no submission, no thread inside a gated call and no thread in a
// synchronizing call (cuCtxSynchronize, cuStreamSynchronize, cuEventSynchronize), measured
// at the lease thread's tick (50 ms resolution): the job's own CPU time, not its GPU time.
// Only gaps of at least kMinGapMs count; the estimate is their exponentially weighted mean
// (weight 1/2 on the newest), i.e. the expected length of a gap once it has lasted
// kMinGapMs. A release pays when the rest of the gap, by that estimate, covers a handoff
// away and a handoff back plus a margin: while it lasts another job runs on the GPU that
// this one would have left idle (the early release of a holder with a waiting job; the
// daemon's [scheduler] idle_release still applies to every holder).
//
// Handoff cost: kHandoffFixedMs plus the larger direction of the bytes to move at
// kBytesPerMs. The rate is half the aggregate of an eviction overlapped with a swap-in,
// 75.9-85.8 GB/s on the H100 (../shared/reference/measurements.md; docs/benchmarks.md
// "handoff": 81-82 GB/s), so ~40 GB/s each way; the fixed part covers drain, messages and
// the synchronizations of a handoff that moves nothing (docs/benchmarks.md: ~10-30 ms).
//
// Plain value type, no locking: its owner serializes (the lease client under g.mu).
#pragma once

#include <cstdint>

namespace gshare::shim {

class GapPredictor {
 public:
  static constexpr int64_t kMinGapMs = 100;        // shorter pauses are part of the GPU phase
  static constexpr int64_t kMarginMs = 100;        // slack for the estimate's error
  static constexpr int64_t kHandoffFixedMs = 30;
  static constexpr uint64_t kBytesPerMs = 40'000'000;  // 40 GB/s each way
  static constexpr uint64_t kNever = ~0ull;        // handoff bytes meaning "never pays"

  // A gap of `ms` ended: the job submitted (or synchronized) again.
  void Observe(int64_t ms) {
    if (ms < kMinGapMs) return;
    estimate_ms_ = estimate_ms_ == 0 ? ms : (estimate_ms_ + ms) / 2;
  }
  // Expected length of a gap that has lasted kMinGapMs; 0 while none has been seen.
  int64_t EstimateMs() const { return estimate_ms_; }

  // Milliseconds of one handoff that moves `bytes` in its larger direction.
  static int64_t HandoffMs(uint64_t bytes) {
    if (bytes == kNever) return INT64_MAX / 4;
    return kHandoffFixedMs + static_cast<int64_t>(bytes / kBytesPerMs);
  }

  // Whether giving the GPU away now, `idle_ms` into a gap, is expected to pay when one
  // handoff costs `handoff_ms`.
  bool WorthReleasing(int64_t idle_ms, int64_t handoff_ms) const {
    if (estimate_ms_ == 0 || idle_ms < kMinGapMs) return false;
    return estimate_ms_ - idle_ms >= 2 * handoff_ms + kMarginMs;
  }

  void Reset() { estimate_ms_ = 0; }

 private:
  int64_t estimate_ms_ = 0;
};

}  // namespace gshare::shim
