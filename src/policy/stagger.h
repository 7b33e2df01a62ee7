// Stagger: phase staggering of the jobs that share a GPU (shared mode): from the holders'
// idle gaps it finds jobs that keep idling together and says whose next gap to stretch, and
// by how much. Pure policy; time comes in as arguments (the shim's CLOCK_MONOTONIC, which
// steady_clock reads on Linux). Not thread-safe: the daemon's event loop is its only caller.
//
// Jobs in shared mode all hold the lease and the driver time-slices their work. A training
// job alternates a GPU phase with a CPU phase (its idle gap: data loading, logging, the
// host side of the step). When jobs with the same period run their CPU phases at the same
// time, the GPU idles for the whole common gap in every period, and nothing moves them
// apart: under fair time-slicing any offset between two such jobs is kept (a neutral
// equilibrium). Started at the same time, or pulled together by their first steps, identical
// jobs (seeds of one model, a sweep) stay in lock step: 5 % of the GPU lost at a 90/10
// GPU/CPU mix, a third at 50/50 (docs/memory.md, "Phase staggering").
//
// The daemon collects the holders' idle gaps (kGapReport: from the end of a synchronizing
// call to the next submission, as the shim measures them) and looks for time in which every
// holder was idle. When kLockGaps gaps in a row each overlap the other holders' gaps for at
// least a kTogetherFraction-th of their length, the follower's next gap (the job whose gap
// began last, d after the leader's) is stretched by `shift` (kStretchGap): its submissions
// wait, the others run alone meanwhile, and the pair settles at a new offset, which the
// neutral equilibrium keeps.
//
// The shift, in the fair-share model of two identical jobs with a GPU phase of G alone and a
// gap of C (docs/memory.md "Phase staggering"): every offset in [C, 2G - C] keeps the GPU
// busy (each gap falls in the other's GPU phase); the target is its middle, G. Stretching
// the follower by s moves the offset from d to u = d + s when u <= C, and to 2u - C beyond
// (the leader, back from its gap, shares the GPU with the follower's rest), so u = (G + C)/2.
// In the state observed the period is P = 2G + C - d (the GPU idles C - d of it), so
// G = (P - C + d)/2 and s = (P + C - 3d)/4. (With s = G instead, the leader runs a whole step
// alone and the pair falls back into lock step: docs/benchmarks.md, "A shift of a whole GPU
// phase falls back into lock step".)
//
// Only GPU-bound holders are staggered (median gap at most half the median period): jobs
// that are idle most of the time are idle together whatever their phase. After a stretch
// the GPU is left alone for kQuietPeriods of the stretched job's periods (at least
// kQuietMin) so that the shift shows before it is judged.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "policy/arbiter.h"

namespace gshare {

class Stagger {
 public:
  static constexpr size_t kHistory = 8;        // gaps kept per job
  static constexpr Millis kSettle{100};        // a gap is judged this long after it ended
  static constexpr Millis kMinCoIdle{2};       // shorter time idle together is noise
  static constexpr int kTogetherFraction = 5;  // of a gap idle together: the GPU idled
  static constexpr int kLockGaps = 4;          // gaps idle together in a row: lock step
  static constexpr size_t kMinGaps = 3;        // gaps per holder before any stretch
  static constexpr Millis kMaxShift{5000};
  static constexpr int kQuietPeriods = 4;
  static constexpr Millis kQuietMin{1000};

  // The job's next gap on the GPU should last at least `gap`.
  struct Order {
    JobId job = 0;
    Millis gap{0};
    Millis shift{0};    // of which is the shift (the rest is its usual gap)
    Millis co_idle{0};  // how long the holders were idle together in the last gap judged
  };

  // An idle gap of `job` on `gpu` ended. `holders`: the jobs holding `gpu` (shared mode).
  // Returns a stretch when the holders have been idle together kLockGaps times in a row.
  std::optional<Order> Report(const GpuKey& gpu, JobId job, TimePoint begin, TimePoint end,
                              const std::vector<JobId>& holders, TimePoint now);
  // The job is gone (its gaps no longer count against others).
  void Forget(JobId job);
  // Gaps of at least kPhaseGap end a GPU phase; shorter pauses belong to it (the line the
  // shim's early release draws too, shim/lease/gap_predictor.h kMinGapMs).
  static constexpr Millis kPhaseGap{50};
  // When `job`'s current GPU phase on `gpu` began: the end of its latest gap of at least
  // kPhaseGap reported while it held `gpu` in shared mode; nullopt before any. A gap that is
  // still going on has not been reported: a holder idle now reads as busy since then.
  std::optional<TimePoint> PhaseBegan(const GpuKey& gpu, JobId job) const;
  // The GPU left shared mode (its stretch count stays).
  void Clear(const GpuKey& gpu) { boards_.erase(gpu); }
  // Stretches ordered on `gpu` since the daemon started (status, benchmarks).
  uint64_t Stretches(const GpuKey& gpu) const;

 private:
  struct Gap {
    TimePoint begin, end;
    bool judged = false;
  };
  struct Board {
    std::map<JobId, std::deque<Gap>> gaps;
    std::map<JobId, TimePoint> phase_began;  // end of the latest gap of >= kPhaseGap
    int together_run = 0;                    // judged gaps in a row that were idle together
    TimePoint quiet_until{};
  };
  // Time in [g.begin, g.end] in which every holder but `job` was idle too.
  static Millis CoIdle(const Board& b, JobId job, const Gap& g, const std::vector<JobId>& holders);
  // The job whose gap overlapping `g` (of `job`) began last, and how much later its gap
  // began than the first one's.
  static std::pair<JobId, Millis> FollowerOf(const Board& b, JobId job, const Gap& g,
                                             const std::vector<JobId>& holders);
  // Median gap and median period (between gap ends) of `gaps`; nullopt with too few.
  struct Rhythm {
    Millis gap{0}, period{0};
  };
  static std::optional<Rhythm> RhythmOf(const std::deque<Gap>& gaps);

  std::map<GpuKey, Board> boards_;
  std::map<GpuKey, uint64_t> stretches_;
};

}  // namespace gshare
