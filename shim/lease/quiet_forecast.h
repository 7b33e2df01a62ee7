// QuietForecast: how long a watched process (one that lower priorities yield to, as a service
// between its requests) stays idle between two busy periods on a GPU, and its publication on
// the priority board (gshare/priority_board.h), so that the processes yielding to it may queue
// longer work at the start of its gap than near its end (docs/design.md, "Priority lanes").
//
// The forecast is the second shortest of the last kHistory gaps: one short outlier aside, the
// gap is not expected shorter than any seen lately. None before kMinGaps gaps. A process
// whose gaps vary widely (random arrivals) so gets a short forecast, and lower work that does
// not fit it waits for the start of a gap (priority_window.h). The last gap caps it: a
// service that fell behind its arrivals serves the queued requests back to back, with gaps far
// shorter than its usual one, and lower work queued for a usual gap would delay each of those
// requests in turn, so that the service never catches up; its short gaps keep the forecast
// short until a usual gap comes back.
//
// The owner writes gaps from whichever thread ends an idle period (atomics, relaxed: a gap
// lost to two racing transitions costs one sample); any thread reads. Header-only.
#pragma once

#include <atomic>
#include <cstdint>

#include "gshare/priority_board.h"

namespace gshare::shim {

class QuietForecast {
 public:
  static constexpr int kHistory = 16;
  static constexpr int kMinGaps = 4;

  // An idle period of `ns` ended (the process submitted again).
  void GapEnded(int64_t ns) {
    if (ns <= 0) return;
    const uint32_t n = count_.fetch_add(1, std::memory_order_relaxed);
    gaps_[n % kHistory].store(ns, std::memory_order_relaxed);
  }

  // The expected length of the next gap, in ns; 0 while fewer than kMinGaps are known.
  int64_t PredictNs() const {
    const uint32_t n = count_.load(std::memory_order_relaxed);
    if (n < kMinGaps) return 0;
    const int kept = n < kHistory ? static_cast<int>(n) : kHistory;
    int64_t first = INT64_MAX, second = INT64_MAX;
    for (int i = 0; i < kept; ++i) {
      const int64_t g = gaps_[i].load(std::memory_order_relaxed);
      if (g <= 0) continue;
      if (g < first) {
        second = first;
        first = g;
      } else if (g < second) {
        second = g;
      }
    }
    const int64_t last = gaps_[(n - 1) % kHistory].load(std::memory_order_relaxed);
    if (last > 0 && last < second) return last;
    return second == INT64_MAX ? 0 : second;
  }

  // The last `n` gaps seen, newest first, into `out` (0 where fewer were seen), in ns.
  void LastGaps(int64_t* out, int n) const {
    const uint32_t seen = count_.load(std::memory_order_relaxed);
    for (int i = 0; i < n; ++i) {
      out[i] = static_cast<uint32_t>(i) < seen && i < kHistory
                   ? gaps_[(seen - 1 - i) % kHistory].load(std::memory_order_relaxed)
                   : 0;
    }
  }

  void Reset() {
    count_.store(0, std::memory_order_relaxed);
    for (auto& g : gaps_) g.store(0, std::memory_order_relaxed);
  }

 private:
  std::atomic<int64_t> gaps_[kHistory] = {};
  std::atomic<uint32_t> count_{0};
};

// What the yielding processes read of a GPU's slot: the higher job is expected to submit again
// at `until_ns` (CLOCK_MONOTONIC), after a gap of `gap_ns`; both 0 when unknown.
struct QuietSpell {
  int64_t until_ns = 0;
  int64_t gap_ns = 0;
  bool Known() const { return until_ns > 0 && gap_ns > 0; }
  // The higher job is late by more than a whole gap: it is not on its forecast any more.
  bool Overdue(int64_t now_ns) const { return now_ns > until_ns + gap_ns; }
};

// A watched process went idle at `now_ns` with forecast `gap_ns` (> 0): publish it, unless
// another watched seat's spell ends sooner and is still ahead (the earliest return counts).
// Called before the busy bit clears, so that the processes it wakes read the new spell.
inline void PublishQuiet(proto::BoardSlot& slot, int64_t now_ns, int64_t gap_ns) {
  if (gap_ns <= 0) return;
  const int64_t until = now_ns + gap_ns;
  int64_t old = slot.quiet_until_ns.load(std::memory_order_relaxed);
  for (;;) {
    if (old > now_ns && old < until) return;
    if (slot.quiet_until_ns.compare_exchange_weak(old, until, std::memory_order_relaxed)) break;
  }
  slot.quiet_gap_ns.store(gap_ns, std::memory_order_release);
}

inline QuietSpell ReadQuiet(const proto::BoardSlot& slot) {
  QuietSpell q;
  q.gap_ns = slot.quiet_gap_ns.load(std::memory_order_acquire);
  q.until_ns = slot.quiet_until_ns.load(std::memory_order_relaxed);
  return q;
}

}  // namespace gshare::shim
