// The shim's early-release rule: which idle gaps are worth giving the GPU away for, given
// what the two handoffs cost; and how long an idle holder waits before its idle release.
#include "lease/gap_predictor.h"

#include <doctest/doctest.h>

namespace gshare::shim::unit_gap_predictor {
namespace {

constexpr int64_t kMin = GapPredictor::kMinGapMs;

TEST_CASE("GapPredictor: no history, no early release") {
  GapPredictor p;
  CHECK_FALSE(p.Known());
  CHECK(p.RemainingMs(kMin) == 0);
  CHECK_FALSE(p.WorthReleasing(kMin, 0));
  CHECK_FALSE(p.WorthReleasing(10'000, 0));
}

TEST_CASE("GapPredictor: pauses shorter than a gap are not learnt") {
  GapPredictor p;
  p.Observe(kMin - 1);
  p.Observe(20);
  CHECK_FALSE(p.Known());
  p.Observe(2000);
  CHECK(p.Known());
  p.Observe(100);
  CHECK(p.RemainingMs(150) == 0);  // one long gap, followed by a pause, is not yet a pattern
  p.Observe(2000);
  CHECK(p.RemainingMs(kMin) == (2000 - kMin + 100 - kMin + 2000 - kMin) / 3);
}

TEST_CASE("GapPredictor: the latest gap alone predicts the next one") {
  // A 50/50 job's first CPU phase (3.3 s) after start-up pauses: its second CPU phase is
  // longer than every pause, and the latest gap says it goes on.
  GapPredictor p;
  p.Observe(80);
  p.Observe(120);
  p.Observe(3300);
  int64_t big = GapPredictor::HandoffMs(22'000'000'000ull);  // 580 ms
  CHECK_FALSE(p.WorthReleasing(kMin, big));                  // (30 + 70 + 3250) / 3 = 1116 < 1260
  CHECK(p.RemainingMs(140) == 3300 - 140);
  CHECK(p.WorthReleasing(140, big));
  // A pause after the long gap takes its lone vote away.
  p.Observe(90);
  CHECK(p.RemainingMs(140) == 0);
  CHECK_FALSE(p.WorthReleasing(140, big));
}

TEST_CASE("GapPredictor: the rest of a gap is the mean over the longer gaps kept") {
  GapPredictor p;
  p.Observe(3000);
  p.Observe(1000);
  CHECK(p.RemainingMs(kMin) == (3000 - kMin + 1000 - kMin) / 2);
  CHECK(p.RemainingMs(1500) == 0);  // only one gap lasted that long, not the latest
  p.Observe(3000);
  CHECK(p.RemainingMs(1500) == 1500);
  // Only the last kHistory gaps count.
  for (int i = 0; i < GapPredictor::kHistory; ++i) p.Observe(500);
  CHECK(p.RemainingMs(kMin) == 500 - kMin);
  p.Reset();
  CHECK_FALSE(p.Known());
}

TEST_CASE("GapPredictor: handoff cost from the bytes to move") {
  CHECK(GapPredictor::HandoffMs(0) == GapPredictor::kHandoffFixedMs);
  // 10 GB at 40 GB/s: 250 ms more.
  CHECK(GapPredictor::HandoffMs(10'000'000'000ull) == GapPredictor::kHandoffFixedMs + 250);
  CHECK(GapPredictor::HandoffMs(GapPredictor::kNever) > 1'000'000'000);
}

TEST_CASE("GapPredictor: release only when the rest of the gap covers both handoffs") {
  GapPredictor p;
  p.Observe(2000);
  p.Observe(2000);
  int64_t cheap = GapPredictor::HandoffMs(0);                 // 30 ms
  int64_t big = GapPredictor::HandoffMs(10'000'000'000ull);   // 280 ms
  int64_t huge = GapPredictor::HandoffMs(40'000'000'000ull);  // 1030 ms
  CHECK_FALSE(p.WorthReleasing(kMin - 1, cheap));             // not a gap yet
  CHECK(p.WorthReleasing(kMin, cheap));
  CHECK(p.WorthReleasing(kMin, big));         // 1900 left >= 660
  CHECK_FALSE(p.WorthReleasing(kMin, huge));  // 1900 < 2160
  CHECK_FALSE(p.WorthReleasing(1500, big));   // only 500 left: too late
  CHECK_FALSE(p.WorthReleasing(kMin, GapPredictor::HandoffMs(GapPredictor::kNever)));
}

TEST_CASE("GapPredictor: short CPU phases never pay for a large handoff") {
  GapPredictor p;
  for (int i = 0; i < 4; ++i) p.Observe(230);  // a 50/50 job with 0.23 s steps
  int64_t big = GapPredictor::HandoffMs(10'000'000'000ull);
  CHECK_FALSE(p.WorthReleasing(kMin, big));
  CHECK(p.WorthReleasing(kMin, 0));       // 180 ms left cover the margin
  CHECK_FALSE(p.WorthReleasing(150, 0));  // 80 ms do not
}

TEST_CASE("GapPredictor: short pauses among long CPU phases neither hide them nor trigger") {
  GapPredictor mixed;
  for (int i = 0; i < 3; ++i) {
    mixed.Observe(3000);  // CPU phases
    mixed.Observe(150);   // pauses inside the GPU phase
  }
  int64_t big = GapPredictor::HandoffMs(10'000'000'000ull);
  // 50 ms into a gap: (3 x 2950 + 3 x 100) / 6 = 1525 ms expected, enough for 2 x 280 + 100.
  CHECK(mixed.WorthReleasing(kMin, big));
  // One long gap among many short ones is no pattern.
  GapPredictor rare;
  rare.Observe(3000);
  for (int i = 0; i < 7; ++i) rare.Observe(150);
  CHECK_FALSE(rare.WorthReleasing(kMin, big));  // (2950 + 7 x 100) / 8 = 456 < 660
  CHECK_FALSE(rare.WorthReleasing(200, big));   // only one gap lasted 200 ms
}

TEST_CASE("GapPredictor: idle release is not risked on a handoff that cannot be priced") {
  const int64_t idle_release = 500;
  // No job waits, or the handoff is priced (even a big one): the configured idle release.
  CHECK(GapPredictor::IdleReleaseMs(idle_release, -1) == idle_release);
  CHECK(GapPredictor::IdleReleaseMs(idle_release, GapPredictor::HandoffMs(0)) == idle_release);
  CHECK(GapPredictor::IdleReleaseMs(idle_release, GapPredictor::HandoffMs(40'000'000'000ull)) ==
        idle_release);
  // Unpriced (the eviction would go to host memory not pinned yet): the cap, not forever.
  int64_t never = GapPredictor::HandoffMs(GapPredictor::kNever);
  CHECK(GapPredictor::IdleReleaseMs(idle_release, never) == GapPredictor::kUnpricedIdleMs);
  // A longer configured idle release is kept.
  CHECK(GapPredictor::IdleReleaseMs(30'000, never) == 30'000);
}

}  // namespace
}  // namespace gshare::shim::unit_gap_predictor
