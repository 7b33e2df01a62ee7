// The shim's early-release rule: which idle gaps are worth giving the GPU away for, given
// what the two handoffs cost.
#include "../../shim/gap_predictor.h"

#include <doctest/doctest.h>

namespace gshare::shim {
namespace {

TEST_CASE("GapPredictor: no history, no early release") {
  GapPredictor p;
  CHECK(p.EstimateMs() == 0);
  CHECK_FALSE(p.WorthReleasing(150, 0));
  CHECK_FALSE(p.WorthReleasing(10'000, 0));
}

TEST_CASE("GapPredictor: pauses shorter than a gap are not learnt") {
  GapPredictor p;
  p.Observe(GapPredictor::kMinGapMs - 1);
  p.Observe(20);
  CHECK(p.EstimateMs() == 0);
  p.Observe(2000);
  CHECK(p.EstimateMs() == 2000);
  p.Observe(50);  // a short pause inside a GPU phase changes nothing
  CHECK(p.EstimateMs() == 2000);
}

TEST_CASE("GapPredictor: the estimate follows new gaps, half weight on the newest") {
  GapPredictor p;
  p.Observe(2000);
  p.Observe(1000);
  CHECK(p.EstimateMs() == 1500);
  p.Observe(1000);
  CHECK(p.EstimateMs() == 1250);
  p.Reset();
  CHECK(p.EstimateMs() == 0);
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
  int64_t cheap = GapPredictor::HandoffMs(0);                  // 30 ms
  int64_t big = GapPredictor::HandoffMs(10'000'000'000ull);    // 280 ms
  int64_t huge = GapPredictor::HandoffMs(40'000'000'000ull);   // 1030 ms
  CHECK_FALSE(p.WorthReleasing(GapPredictor::kMinGapMs - 1, cheap));  // not a gap yet
  CHECK(p.WorthReleasing(GapPredictor::kMinGapMs, cheap));
  CHECK(p.WorthReleasing(GapPredictor::kMinGapMs, big));   // 1900 left >= 660
  CHECK_FALSE(p.WorthReleasing(GapPredictor::kMinGapMs, huge));  // 1900 < 2160
  CHECK_FALSE(p.WorthReleasing(1500, big));                // only 500 left: too late
  CHECK_FALSE(p.WorthReleasing(GapPredictor::kMinGapMs,
                               GapPredictor::HandoffMs(GapPredictor::kNever)));

  // A job with short CPU phases (a 90/10 job's ~25 ms, a 50/50 job's ~230 ms) never pays
  // for a 10 GB handoff.
  GapPredictor shortp;
  shortp.Observe(230);
  CHECK_FALSE(shortp.WorthReleasing(GapPredictor::kMinGapMs, big));
  // With free handoffs (0 ms), the 130 ms left of such a gap cover the margin.
  CHECK(shortp.WorthReleasing(GapPredictor::kMinGapMs, 0));
  CHECK_FALSE(shortp.WorthReleasing(GapPredictor::kMinGapMs + 50, 0));
}

}  // namespace
}  // namespace gshare::shim
