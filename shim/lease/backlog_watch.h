// BacklogWatch: whether a watched process (one that lower priorities yield to, as a service
// between its requests) has fallen behind its own arrivals. An open-loop service that falls
// behind serves its queued requests back to back: the idle gap it had between requests
// vanishes, or shrinks to the few hundred µs between one request's synchronization and the
// next one's launch. While it is behind, the MPS clients that run beside it on their SM
// partition (priority_window.h) wait for its gaps instead, so that it has every SM until it
// has caught up; beside a partition it served fewer requests than arrived and stayed behind
// (docs/benchmarks.md, "A service that falls behind").
//
// A request may synchronize more than once (a copy, then the forward pass), so not every gap
// is one between requests: a gap is *real* when it lasts at least half the usual real gap.
// - `usual gap` is the moving mean (weight 1/8) of the real gaps, from the first gap;
//   `usual period` the moving mean of the time from one real gap's end to the next one's.
// - Behind starts once kLongMul usual periods have passed since the last real gap ended,
//   after kMinGaps real gaps, and only for a job whose usual gap is at least kMinUsualNs: one
//   whose every gap is short (a training that synchronizes each step, or never) is never
//   behind, and its partition clients keep running beside it.
// - Behind ends at the next real gap (it had to wait for a request again: caught up), or after
//   kMaxBehindNs, when the job's pace has changed: what is usual is then learnt anew.
//
// The owner calls WentIdle as an idle period starts (ClearIdleLane), Retract when the lane was
// busy again before that call ended, BecameBusy as an idle period ends (BecomeBusy), and
// StillBusy from its sentinel while busy; relaxed atomics, as QuietForecast. The idle start is
// its own and taken by the gap that ends it, so that no gap spans a busy period that the
// sentinel's settling and the next submission merged: such a gap would look like a request
// that waited for its arrival, and end a backlog that goes on. Any thread reads Behind.
// Header-only.
#pragma once

#include <atomic>
#include <cstdint>

namespace gshare::shim {

class BacklogWatch {
 public:
  static constexpr int kMinGaps = 4;
  static constexpr int64_t kMinUsualNs = 1'000'000;
  static constexpr int kRealDiv = 2;
  static constexpr int kLongMul = 3;
  static constexpr int64_t kMaxBehindNs = 500'000'000;

  // The watched process went idle at `now_ns` (CLOCK_MONOTONIC).
  void WentIdle(int64_t now_ns) { idle_since_ns_.store(now_ns, std::memory_order_relaxed); }
  // It was busy again before its idle start was published: no gap to measure from it.
  void Retract() { idle_since_ns_.store(0, std::memory_order_relaxed); }
  // It submitted again at `now_ns`: the gap since WentIdle ended, if one is known (else as
  // StillBusy). Returns Behind() after it.
  bool BecameBusy(int64_t now_ns) {
    const int64_t since = idle_since_ns_.exchange(0, std::memory_order_relaxed);
    return since > 0 ? GapEnded(now_ns - since, now_ns) : StillBusy(now_ns);
  }

  // An idle period of `gap_ns` ended at `now_ns`. Returns Behind() after it.
  bool GapEnded(int64_t gap_ns, int64_t now_ns) {
    if (gap_ns <= 0) return StillBusy(now_ns);
    const int64_t usual = usual_gap_ns_.load(std::memory_order_relaxed);
    if (gap_ns < usual / kRealDiv) return StillBusy(now_ns);  // within a request, or behind
    const int64_t last = last_real_ns_.exchange(now_ns, std::memory_order_relaxed);
    const bool was_behind = behind_since_ns_.exchange(0, std::memory_order_relaxed) > 0;
    if (last > 0 && !was_behind) Learn(usual_period_ns_, now_ns - last);
    Learn(usual_gap_ns_, gap_ns);
    const int seen = real_gaps_.load(std::memory_order_relaxed);
    if (seen < kMinGaps) real_gaps_.store(seen + 1, std::memory_order_relaxed);
    return false;
  }

  // The process is busy, or ended a short gap, at `now_ns`. Returns Behind() after it.
  bool StillBusy(int64_t now_ns) {
    const int64_t since = behind_since_ns_.load(std::memory_order_relaxed);
    if (since > 0) {
      if (now_ns - since > kMaxBehindNs) Reset();
      return Behind();
    }
    const int64_t last = last_real_ns_.load(std::memory_order_relaxed);
    const int64_t period = usual_period_ns_.load(std::memory_order_relaxed);
    if (real_gaps_.load(std::memory_order_relaxed) >= kMinGaps &&
        usual_gap_ns_.load(std::memory_order_relaxed) >= kMinUsualNs && period > 0 && last > 0 &&
        now_ns - last > kLongMul * period) {
      behind_since_ns_.store(now_ns, std::memory_order_relaxed);
    }
    return Behind();
  }

  bool Behind() const { return behind_since_ns_.load(std::memory_order_relaxed) > 0; }
  // The usual real gap and period, in ns; 0 before they are known.
  int64_t UsualGapNs() const { return usual_gap_ns_.load(std::memory_order_relaxed); }
  int64_t UsualPeriodNs() const { return usual_period_ns_.load(std::memory_order_relaxed); }
  // When the last real gap ended (CLOCK_MONOTONIC ns); 0: none since the last Reset.
  int64_t LastRealNs() const { return last_real_ns_.load(std::memory_order_relaxed); }

  void Reset() {
    usual_gap_ns_.store(0, std::memory_order_relaxed);
    usual_period_ns_.store(0, std::memory_order_relaxed);
    last_real_ns_.store(0, std::memory_order_relaxed);
    behind_since_ns_.store(0, std::memory_order_relaxed);
    real_gaps_.store(0, std::memory_order_relaxed);
    idle_since_ns_.store(0, std::memory_order_relaxed);
  }

 private:
  static void Learn(std::atomic<int64_t>& mean, int64_t sample) {
    const int64_t m = mean.load(std::memory_order_relaxed);
    mean.store(m == 0 ? sample : m + (sample - m) / 8, std::memory_order_relaxed);
  }

  std::atomic<int64_t> usual_gap_ns_{0};
  std::atomic<int64_t> usual_period_ns_{0};
  std::atomic<int64_t> last_real_ns_{0};     // when the last real gap ended; 0: none yet
  std::atomic<int64_t> behind_since_ns_{0};  // 0: not behind
  std::atomic<int> real_gaps_{0};            // real gaps seen, up to kMinGaps
  std::atomic<int64_t> idle_since_ns_{0};    // the idle start not yet taken; 0: none
};

}  // namespace gshare::shim
