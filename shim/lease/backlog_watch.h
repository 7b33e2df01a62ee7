// BacklogWatch: whether a watched process (one that lower priorities yield to, as a service
// between its requests) has fallen behind its own arrivals. An open-loop service that falls
// behind serves its queued requests back to back: its gaps shrink from their usual length to
// the few hundred µs between one request's synchronization and the next one's launch, or
// vanish, its busy spell then lasting many requests. While it is behind, the MPS clients that
// run beside it on their SM partition (priority_window.h) wait for its gaps instead, so that
// it has every SM until it has caught up; beside a partition it served fewer requests than
// arrived and stayed behind (docs/benchmarks.md, "A service that falls behind").
//
// Only a job with gaps can fall behind: one whose usual gap is under kMinUsualNs (a training
// that synchronizes each step, or never) is never behind, and its partition clients keep
// running beside it. For the others:
// - `usual gap` and `usual busy` are moving means (weight 1/8) of the gaps and busy spells
//   seen outside backlogs, from the first; a backlog needs kMinGaps gaps known.
// - Behind starts at a gap shorter than usual ÷ kShortDiv, or once a busy spell has lasted
//   kLongMul × the usual one.
// - Behind ends at a gap of at least usual ÷ kCaughtUpDiv (it had to wait for a request
//   again: caught up), or after kMaxBehindNs: a job that stays that busy has a new pace, which
//   becomes its usual.
//
// The owner calls GapEnded and BusyStarted as an idle period ends (BecomeBusy), BusyEnded as
// a busy one ends, StillBusy from its sentinel while busy; one transition at a time in the
// usual course, relaxed atomics as QuietForecast (two racing transitions cost one sample).
// Any thread reads Behind. Header-only.
#pragma once

#include <atomic>
#include <cstdint>

namespace gshare::shim {

class BacklogWatch {
 public:
  static constexpr int kMinGaps = 4;
  static constexpr int64_t kMinUsualNs = 1'000'000;
  static constexpr int kShortDiv = 4;
  static constexpr int kLongMul = 4;
  static constexpr int kCaughtUpDiv = 2;
  static constexpr int64_t kMaxBehindNs = 500'000'000;

  // An idle period of `gap_ns` ended at `now_ns` (CLOCK_MONOTONIC). Returns Behind() after it.
  bool GapEnded(int64_t gap_ns, int64_t now_ns) {
    if (gap_ns <= 0) return Behind();
    const int64_t usual = usual_gap_ns_.load(std::memory_order_relaxed);
    const int seen = gaps_.load(std::memory_order_relaxed);
    if (Behind()) {
      if (gap_ns >= usual / kCaughtUpDiv) {
        behind_since_ns_.store(0, std::memory_order_relaxed);
        Learn(usual_gap_ns_, gap_ns);
      } else if (Expired(now_ns)) {
        usual_gap_ns_.store(gap_ns, std::memory_order_relaxed);
      }
      return Behind();
    }
    if (Eligible() && gap_ns < usual / kShortDiv) {
      Start(now_ns);
      return true;
    }
    if (seen < kMinGaps) gaps_.store(seen + 1, std::memory_order_relaxed);
    Learn(usual_gap_ns_, gap_ns);
    return false;
  }

  void BusyStarted(int64_t now_ns) { busy_since_ns_.store(now_ns, std::memory_order_relaxed); }

  void BusyEnded(int64_t now_ns) {
    const int64_t since = busy_since_ns_.exchange(0, std::memory_order_relaxed);
    if (since > 0 && now_ns > since && !Behind()) Learn(usual_busy_ns_, now_ns - since);
  }

  // The process is still busy at `now_ns`. Returns Behind() after it.
  bool StillBusy(int64_t now_ns) {
    const int64_t since = busy_since_ns_.load(std::memory_order_relaxed);
    if (since <= 0) return Behind();
    if (Behind()) {
      if (Expired(now_ns)) usual_busy_ns_.store(now_ns - since, std::memory_order_relaxed);
      return Behind();
    }
    const int64_t usual = usual_busy_ns_.load(std::memory_order_relaxed);
    if (Eligible() && usual > 0 && now_ns - since > kLongMul * usual) Start(now_ns);
    return Behind();
  }

  bool Behind() const { return behind_since_ns_.load(std::memory_order_relaxed) > 0; }
  // The usual gap and busy spell, in ns; 0 before the first.
  int64_t UsualGapNs() const { return usual_gap_ns_.load(std::memory_order_relaxed); }
  int64_t UsualBusyNs() const { return usual_busy_ns_.load(std::memory_order_relaxed); }

  void Reset() {
    usual_gap_ns_.store(0, std::memory_order_relaxed);
    usual_busy_ns_.store(0, std::memory_order_relaxed);
    busy_since_ns_.store(0, std::memory_order_relaxed);
    behind_since_ns_.store(0, std::memory_order_relaxed);
    gaps_.store(0, std::memory_order_relaxed);
  }

 private:
  static void Learn(std::atomic<int64_t>& mean, int64_t sample) {
    const int64_t m = mean.load(std::memory_order_relaxed);
    mean.store(m == 0 ? sample : m + (sample - m) / 8, std::memory_order_relaxed);
  }
  bool Eligible() const {
    return gaps_.load(std::memory_order_relaxed) >= kMinGaps &&
           usual_gap_ns_.load(std::memory_order_relaxed) >= kMinUsualNs;
  }
  void Start(int64_t now_ns) {
    behind_since_ns_.store(now_ns > 0 ? now_ns : 1, std::memory_order_relaxed);
  }
  // A backlog longer than kMaxBehindNs ends: the caller takes the new pace as usual.
  bool Expired(int64_t now_ns) {
    if (now_ns - behind_since_ns_.load(std::memory_order_relaxed) <= kMaxBehindNs) return false;
    behind_since_ns_.store(0, std::memory_order_relaxed);
    return true;
  }

  std::atomic<int64_t> usual_gap_ns_{0};
  std::atomic<int64_t> usual_busy_ns_{0};
  std::atomic<int64_t> busy_since_ns_{0};    // 0: idle
  std::atomic<int64_t> behind_since_ns_{0};  // 0: not behind
  std::atomic<int> gaps_{0};                 // gaps learnt, up to kMinGaps
};

}  // namespace gshare::shim
