#include "daemon/gpu/handoff_log.h"

#include <doctest/doctest.h>

namespace gshare::unit_handoff_log {
namespace {

const GpuKey kGpu = "GPU-0";
const TimePoint t0{};
TimePoint At(int ms) { return t0 + Millis(ms); }

TEST_CASE("HandoffLog times a handoff from the DROP to the new holder's swap-in") {
  HandoffLog log;
  log.Dropped(kGpu, JobId{1}, At(100));
  log.Dropped(kGpu, JobId{1}, At(150));  // repeated within the turn: the first counts
  CHECK_FALSE(log.IsOpen(kGpu, 7));
  log.Granted(kGpu, 2, 7, At(130 + 100));
  CHECK(log.IsOpen(kGpu, 7));
  log.Evicted(kGpu, 7, 1000);
  log.Evicted(kGpu, 8, 5);  // another grant's: not this one's
  CHECK_FALSE(log.SwappedIn(kGpu, 3, 7, {1, 1, 0, false, false}, At(300))
                  .has_value());  // not the new holder
  CHECK_FALSE(
      log.SwappedIn(kGpu, 2, 6, {1, 1, 0, false, false}, At(300)).has_value());  // an older grant
  std::optional<HandoffLog::Handoff> h =
      log.SwappedIn(kGpu, 2, 7, {4000, 55.0, 0, false, false}, At(400));
  REQUIRE(h.has_value());
  CHECK(h->from == 1);
  CHECK(h->to == 2);
  CHECK(h->drain_ms == doctest::Approx(130));
  CHECK(h->evict_bytes == 1000);
  CHECK(h->swapin_bytes == 4000);
  CHECK(h->swapin_ms == 55.0);
  CHECK(h->total_ms == doctest::Approx(300));
  // 300 = drain 130 + swap-in 55 + the rest 115; bound: 130 + 4000 B at 50 GB/s + 50.
  CHECK(h->other_ms == doctest::Approx(115));
  CHECK(h->bound_ms == doctest::Approx(180.00008));
  CHECK(h->over_bound());
  CHECK_FALSE(log.IsOpen(kGpu, 7));
  // The next process of the same grant reports too late: the handoff is closed.
  CHECK_FALSE(log.SwappedIn(kGpu, 2, 7, {4000, 60.0, 0, false, false}, At(410)).has_value());
  CHECK(log.count(kGpu) == 1);
  REQUIRE(log.last(kGpu) != nullptr);
  CHECK(log.last(kGpu)->total_ms == doctest::Approx(300));

  nlohmann::json g;
  log.AddJson(kGpu, &g);
  CHECK(g["handoffs"] == 1);
  CHECK(g["last_handoff"]["from"] == 1);
  CHECK(g["last_handoff"]["evict_bytes"] == 1000);
  CHECK(g["handoffs_over_bound"] == 1);
  CHECK(g["last_handoff"]["other_ms"] == doctest::Approx(115));
}

TEST_CASE("HandoffLog: the bound is the drain, the larger direction at 50 GB/s and 50 ms") {
  HandoffLog log;
  constexpr uint64_t kGB = 1000000000;
  log.Dropped(kGpu, JobId{1}, At(0));
  log.Granted(kGpu, 2, 1, At(200));  // drain 200 ms
  log.Evicted(kGpu, 1, 10 * kGB);    // 200 ms at 50 GB/s
  std::optional<HandoffLog::Handoff> h =
      log.SwappedIn(kGpu, 2, 1, {5 * kGB, 180, 0, false, false}, At(420));
  REQUIRE(h.has_value());
  CHECK(h->bound_ms == doctest::Approx(200 + 200 + 50));
  CHECK(h->other_ms == doctest::Approx(40));  // 420 - 200 - 180
  CHECK_FALSE(h->over_bound());
  // The same moves with half a second unexplained are over it.
  log.Dropped(kGpu, JobId{2}, At(1000));
  log.Granted(kGpu, 1, 2, At(1200));
  log.Evicted(kGpu, 2, 5 * kGB);
  h = log.SwappedIn(kGpu, 1, 2, {10 * kGB, 200, 0, false, false}, At(1950));
  REQUIRE(h.has_value());
  CHECK(h->bound_ms == doctest::Approx(450));
  CHECK(h->other_ms == doctest::Approx(550));
  CHECK(h->over_bound());
  CHECK(log.count(kGpu) == 2);
  CHECK(log.over_bound(kGpu) == 1);
  // A swap-in that gave up for want of room waited for memory: counted, never over the bound.
  log.Dropped(kGpu, JobId{1}, At(3000));
  log.Granted(kGpu, 2, 3, At(3100));
  h = log.SwappedIn(kGpu, 2, 3, {0, 9000, 0, true, false}, At(12100));
  REQUIRE(h.has_value());
  CHECK(h->room_wait);
  CHECK(h->total_ms > h->bound_ms);
  CHECK_FALSE(h->over_bound());
  CHECK(log.count(kGpu) == 3);
  CHECK(log.over_bound(kGpu) == 1);
}

TEST_CASE("HandoffLog: a swap-in's wait for room it then got is added to the bound as taken") {
  HandoffLog log;
  // A turn granted beside a resident job whose memory leaves no room until it exits: 128 MiB
  // back in 2,415 ms, 2,400 of them waiting for that memory.
  constexpr uint64_t kMiB128 = 134217728;
  log.Granted(kGpu, 2, 1, At(0));  // no DROP: the GPU's turn was free
  std::optional<HandoffLog::Handoff> h =
      log.SwappedIn(kGpu, 2, 1, {kMiB128, 2415, 2400, false, false}, At(2445));
  REQUIRE(h.has_value());
  CHECK(h->room_wait_ms == doctest::Approx(2400));
  CHECK(h->bound_ms == doctest::Approx(0 + 134217728 / 50e6 + 2400 + 50));
  CHECK(h->other_ms == doctest::Approx(30));
  CHECK_FALSE(h->room_wait);  // it did not give up
  CHECK_FALSE(h->over_bound());
  // Without the wait reported, the same handoff is over its bound; a wait longer than the
  // swap-in it is part of counts as the swap-in.
  log.Granted(kGpu, 2, 2, At(5000));
  h = log.SwappedIn(kGpu, 2, 2, {kMiB128, 2415, 0, false, false}, At(7445));
  REQUIRE(h.has_value());
  CHECK(h->over_bound());
  log.Granted(kGpu, 2, 3, At(10000));
  h = log.SwappedIn(kGpu, 2, 3, {kMiB128, 100, 900, false, false}, At(10120));
  REQUIRE(h.has_value());
  CHECK(h->room_wait_ms == doctest::Approx(100));
  CHECK(log.over_bound(kGpu) == 1);
  nlohmann::json g;
  log.AddJson(kGpu, &g);
  CHECK(g["last_handoff"]["room_wait_ms"] == doctest::Approx(100));
}

TEST_CASE("HandoffLog: checkpoints and a restore are the driver's time; only the rest is bounded") {
  HandoffLog log;
  constexpr uint64_t kGB = 1000000000;
  log.Checkpointed(kGpu, 999);  // no handoff open: nothing to count it in
  log.Dropped(kGpu, JobId{3}, At(0));
  log.Granted(kGpu, 2, 1, At(0));  // drain 0: the old holder had released
  log.Evicted(kGpu, 1, 30 * kGB);
  log.Checkpointed(kGpu, 20000);     // 30 GB at 1.5 GB/s
  log.Checkpointed("GPU-other", 7);  // another GPU's handoff
  std::optional<HandoffLog::Handoff> h =
      log.SwappedIn(kGpu, 2, 1, {30 * kGB, 6000, 0, false, /*restored=*/true}, At(26040));
  REQUIRE(h.has_value());
  CHECK(h->checkpoint_ms == doctest::Approx(20000));
  CHECK(h->driver_paced);
  CHECK(h->other_ms == doctest::Approx(40));  // 26040 - 0 - 20000 - 6000
  CHECK(h->bound_ms == doctest::Approx(20000 + 6000 + 50));
  CHECK_FALSE(h->over_bound());
  nlohmann::json g;
  log.AddJson(kGpu, &g);
  CHECK(g["last_handoff"]["checkpoint_ms"] == doctest::Approx(20000));
  CHECK(g["last_handoff"]["driver_paced"] == true);
  // A restore alone is driver-paced too; 100 ms unexplained beside it is over the bound.
  log.Dropped(kGpu, JobId{2}, At(30000));
  log.Granted(kGpu, 3, 2, At(30010));
  h = log.SwappedIn(kGpu, 3, 2, {30 * kGB, 5000, 0, false, /*restored=*/true}, At(35110));
  REQUIRE(h.has_value());
  CHECK(h->checkpoint_ms == 0);
  CHECK(h->bound_ms == doctest::Approx(10 + 5000 + 50));
  CHECK(h->other_ms == doctest::Approx(100));
  CHECK(h->over_bound());
  // A swap-engine handoff of the same bytes keeps the link's bound.
  log.Dropped(kGpu, JobId{3}, At(40000));
  log.Granted(kGpu, 2, 3, At(40000));
  h = log.SwappedIn(kGpu, 2, 3, {30 * kGB, 5000, 0, false, false}, At(45100));
  REQUIRE(h.has_value());
  CHECK_FALSE(h->driver_paced);
  CHECK(h->bound_ms == doctest::Approx(600 + 50));
  CHECK(h->over_bound());
}

TEST_CASE("HandoffLog: a first grant on a free GPU that moved nothing is not a handoff") {
  HandoffLog log;
  log.Granted(kGpu, 5, 1, At(0));
  CHECK_FALSE(log.SwappedIn(kGpu, 5, 1, {0, 0, 0, false, false}, At(10)).has_value());
  CHECK(log.count(kGpu) == 0);
  nlohmann::json g;
  log.AddJson(kGpu, &g);
  CHECK(g["handoffs"] == 0);
  CHECK(g["last_handoff"].is_null());
  // A grant without a DROP that swaps in is one (the GPU was free, memory moved).
  log.Granted(kGpu, 5, 2, At(20));
  std::optional<HandoffLog::Handoff> h =
      log.SwappedIn(kGpu, 5, 2, {64, 1.0, 0, false, false}, At(30));
  REQUIRE(h.has_value());
  CHECK(h->from == 0);
  CHECK(h->drain_ms == 0);
  CHECK(log.count(kGpu) == 1);
  CHECK(log.count("GPU-other") == 0);
}

}  // namespace
}  // namespace gshare::unit_handoff_log
