// The swap engine's wait for room another process gives up: on while the GPU's free memory
// reaches new highs, over `stall` after the last one.
#include "memory/room_wait.h"

#include <doctest/doctest.h>

namespace gshare::shim::unit_room_wait {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr uint64_t kGiB = 1ull << 30;

TEST_CASE("RoomWait: without progress the wait ends after the stall time") {
  RoomWait w(100 * kMs, 0);
  CHECK(w.KeepWaiting(0, 4 * kGiB));  // the baseline
  CHECK(w.KeepWaiting(99 * kMs, 4 * kGiB));
  CHECK_FALSE(w.KeepWaiting(100 * kMs, 4 * kGiB));
}

TEST_CASE("RoomWait: a slow eviction keeps the wait going past the stall time") {
  RoomWait w(100 * kMs, 0);
  // 1 GiB more every 80 ms for 2 s: far past 100 ms in all, never 100 ms without progress.
  for (int i = 0; i <= 25; ++i) CHECK(w.KeepWaiting(i * 80 * kMs, (1 + i) * kGiB));
  // Then it stops, 100 ms after the last high (at 2000 ms).
  CHECK(w.KeepWaiting(2099 * kMs, 26 * kGiB));
  CHECK_FALSE(w.KeepWaiting(2100 * kMs, 26 * kGiB));
}

TEST_CASE("RoomWait: only new highs count, not memory freed and taken again") {
  RoomWait w(100 * kMs, 0);
  CHECK(w.KeepWaiting(0, 8 * kGiB));
  CHECK(w.KeepWaiting(50 * kMs, 2 * kGiB));  // someone allocated
  CHECK(w.KeepWaiting(90 * kMs, 6 * kGiB));  // back up, but below the high
  CHECK_FALSE(w.KeepWaiting(100 * kMs, 7 * kGiB));
}

int g_polls = 0;
uint64_t g_free = 0;
uint64_t CountedFree() {
  ++g_polls;
  return g_free;
}

TEST_CASE("RoomWait: the free memory is asked at most every poll interval") {
  g_polls = 0;
  g_free = 1 * kGiB;
  RoomWait w(100 * kMs, 0);
  // Every millisecond for 50 ms: 5 polls (0, 10, ..., 40 ms).
  for (int64_t t = 0; t < 50 * kMs; t += kMs) CHECK(w.KeepWaiting(t, CountedFree));
  CHECK(g_polls == 5);
  // Growth seen at the next poll restarts the stall time; without a poll it is not seen.
  g_free = 2 * kGiB;
  CHECK(w.KeepWaiting(45 * kMs, CountedFree));  // 5 ms after the last poll: not asked
  CHECK(g_polls == 5);
  CHECK(w.KeepWaiting(50 * kMs, CountedFree));  // asked: a new high at 50 ms
  CHECK(g_polls == 6);
  CHECK(w.KeepWaiting(149 * kMs, CountedFree));
  CHECK_FALSE(w.KeepWaiting(150 * kMs, CountedFree));
}

TEST_CASE("RoomWait: retries every millisecond while room comes, every 8 ms once it stalls") {
  RoomWait w(1000 * kMs, 0);
  CHECK(w.KeepWaiting(0, 1 * kGiB));
  CHECK(w.PauseNs(0) == RoomWait::kPauseNs);
  CHECK(w.PauseNs(49 * kMs) == RoomWait::kPauseNs);
  CHECK(w.PauseNs(50 * kMs) == RoomWait::kStalledPauseNs);  // no new high for 50 ms
  CHECK(w.KeepWaiting(300 * kMs, 2 * kGiB));                // an eviction frees memory
  CHECK(w.PauseNs(300 * kMs) == RoomWait::kPauseNs);
  CHECK(w.PauseNs(349 * kMs) == RoomWait::kPauseNs);
  CHECK(w.PauseNs(350 * kMs) == RoomWait::kStalledPauseNs);
  // Never past the wait's end (1000 ms after the last high): 3 ms before it, 3 ms.
  CHECK(w.PauseNs(1297 * kMs) == 3 * kMs);
  CHECK(w.PauseNs(1300 * kMs) == RoomWait::kPauseNs);
  // A caller's floor holds throughout.
  CHECK(w.PauseNs(300 * kMs, 2 * kMs) == 2 * kMs);
  CHECK(w.PauseNs(350 * kMs, 2 * kMs) == RoomWait::kStalledPauseNs);
  CHECK(w.PauseNs(1299 * kMs, 2 * kMs) == 2 * kMs);
}

}  // namespace
}  // namespace gshare::shim::unit_room_wait
