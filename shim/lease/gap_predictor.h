// GapPredictor: how long a lease holder's idle gaps last (its CPU phases: data loading,
// logging, evaluation on the host), to decide whether giving the GPU away at the start of a
// gap pays for the two handoffs it costs (out now, back when the gap ends). Plain value type,
// not synchronized: its owner serializes (each device's lease state, under g_mu).
//
// A gap is a time with no submission, no thread inside a gated call and no thread in a
// synchronizing call (cuCtxSynchronize, cuStreamSynchronize, cuEventSynchronize), measured
// at the lease thread's tick (20 ms resolution): the job's own CPU time, not its GPU time.
// Only gaps of at least kMinGapMs count; the last kHistory are kept. Once the holder has
// been idle for t, the expected rest of this gap is the mean of g - t over the kept gaps g
// longer than t (at least kMinSamples of them, or one when it is the latest gap), so short
// pauses inside a GPU phase do not hide long CPU phases, nor does one long gap among short
// ones make the holder leave; a job's second CPU phase already follows its first. A
// release pays when that rest covers a handoff away and a handoff back plus a margin: while
// it lasts another job runs on the GPU that this one would have left idle (the early release
// of a holder with a waiting job; the daemon's [scheduler] idle_release still applies to
// every holder).
//
// Handoff cost: kHandoffFixedMs plus the larger direction of the bytes to move at
// kBytesPerMs. The rate is half the aggregate of an eviction overlapped with a swap-in,
// ~80 GB/s, so ~40 GB/s each way; the fixed part covers drain, messages and the
// synchronizations of a handoff that moves nothing, a few ms to ~30 ms (both:
// docs/benchmarks.md, "Handoff speed" and "Drains: how long a holder takes to give the GPU
// back").
#pragma once

#include <cstdint>

#include "gshare/protocol.h"

namespace gshare::shim {

class GapPredictor {
 public:
  // Shorter pauses are part of the GPU phase. Each tick of a gap is a tick later that the
  // GPU goes to a waiting job, and jobs with long CPU phases hand off at every one of them,
  // so a longer minimum delays every handoff (docs/memory.md, "The daemon's ledger and
  // policy", early release).
  static constexpr int64_t kMinGapMs = 50;
  static constexpr int64_t kMarginMs = 100;  // slack for the estimate's error
  static constexpr int kHistory = 8;         // gaps kept
  static constexpr int kMinSamples = 2;      // gaps longer than t needed to predict (or the latest)
  static constexpr int64_t kHandoffFixedMs = 30;
  static constexpr uint64_t kBytesPerMs = 40'000'000;       // 40 GB/s each way
  static constexpr uint64_t kNever = proto::kHandoffNever;  // "never pays"

  // A gap of `ms` ended: the job submitted (or synchronized) again.
  void Observe(int64_t ms) {
    if (ms < kMinGapMs) return;
    gaps_[next_] = ms;
    next_ = (next_ + 1) % kHistory;
    if (count_ < kHistory) ++count_;
  }
  // Whether any gap has been seen.
  bool Known() const { return count_ > 0; }
  // Expected rest of a gap that has lasted `idle_ms`; 0 without kMinSamples longer gaps,
  // unless the one longer gap is the latest: a gap longer than every pause since the last
  // long gap is taken as the same phase again (a periodic job's CPU phase). Pauses inside
  // the GPU phase since then keep the one sample from counting.
  int64_t RemainingMs(int64_t idle_ms) const {
    int n = 0;
    int64_t sum = 0;
    for (int i = 0; i < count_; ++i) {
      if (gaps_[i] > idle_ms) {
        sum += gaps_[i] - idle_ms;
        ++n;
      }
    }
    int64_t latest = count_ > 0 ? gaps_[(next_ + kHistory - 1) % kHistory] : 0;
    bool latest_alone = n == 1 && latest > idle_ms;
    return n < kMinSamples && !latest_alone ? 0 : sum / n;
  }

  // Milliseconds of one handoff that moves `bytes` in its larger direction.
  static int64_t HandoffMs(uint64_t bytes) {
    if (bytes == kNever) return INT64_MAX / 4;
    return kHandoffFixedMs + static_cast<int64_t>(bytes / kBytesPerMs);
  }

  // Whether giving the GPU away now, `idle_ms` into a gap, is expected to pay when one
  // handoff costs `handoff_ms`.
  bool WorthReleasing(int64_t idle_ms, int64_t handoff_ms) const {
    if (idle_ms < kMinGapMs) return false;
    int64_t rest = RemainingMs(idle_ms);
    return rest > 0 && rest >= 2 * handoff_ms + kMarginMs;
  }

  // How long a holder stays idle before it gives the lease back (the idle release), when the
  // daemon's [scheduler] idle_release is `idle_release_ms` and one handoff costs `handoff_ms`
  // (< 0: no job waits). A handoff that cannot be priced (kNever: it would evict into host
  // memory not pinned yet, at the host's populate rate, which can take seconds) is not risked
  // on a short pause such as one in a job's start-up: the holder waits kUnpricedIdleMs, which
  // the quantum also bounds. Priced handoffs keep idle_release: waiting for 2 x handoff_ms
  // (rent-or-buy) lengthened the jobs' first CPU phases and gained nothing measurable (both:
  // docs/benchmarks.md, "What went wrong at the start of the pairs, and what changed").
  static constexpr int64_t kUnpricedIdleMs = 10'000;
  static int64_t IdleReleaseMs(int64_t idle_release_ms, int64_t handoff_ms) {
    bool unpriced = handoff_ms >= HandoffMs(kNever);
    return unpriced && kUnpricedIdleMs > idle_release_ms ? kUnpricedIdleMs : idle_release_ms;
  }

  void Reset() { count_ = next_ = 0; }

 private:
  int64_t gaps_[kHistory] = {};
  int count_ = 0;
  int next_ = 0;
};

}  // namespace gshare::shim
