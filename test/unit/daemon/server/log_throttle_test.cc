// LogThrottle: a user's first events of a window are logged, the rest counted and reported in
// one line per window, and a steady stream costs one line per window.
#include "daemon/server/log_throttle.h"

#include <doctest/doctest.h>

#include <string>
#include <tuple>
#include <vector>

namespace gshare::unit_log_throttle {
namespace {

const TimePoint kStart{std::chrono::hours(1)};
constexpr Millis kMinute = std::chrono::minutes(1);

TEST_CASE("LogThrottle logs a burst per window and reports the rest together") {
  LogThrottle throttle(2, kMinute);
  CHECK(throttle.Note(7, kStart) == std::optional<uint64_t>(1));
  CHECK(throttle.Note(7, kStart + Millis(1)) == std::optional<uint64_t>(1));
  for (int i = 0; i < 1000; ++i)
    CHECK_FALSE(throttle.Note(7, kStart + Millis(2), "why").has_value());
  // Another user has a window of its own.
  CHECK(throttle.Note(8, kStart + Millis(3)) == std::optional<uint64_t>(1));
  CHECK(throttle.NextFlush() == kStart + kMinute);

  // The window ends: the next event is reported with the 1000 held back.
  CHECK(throttle.Note(7, kStart + kMinute) == std::optional<uint64_t>(1001));
  CHECK(throttle.Note(7, kStart + kMinute + Millis(1)) == std::optional<uint64_t>(1));
  CHECK_FALSE(throttle.Note(7, kStart + kMinute + Millis(2)).has_value());
}

TEST_CASE("LogThrottle::Flush reports a window's held events once, then holds the next window") {
  LogThrottle throttle(1, kMinute);
  CHECK(throttle.Note(7, kStart) == std::optional<uint64_t>(1));
  CHECK_FALSE(throttle.Note(7, kStart + Millis(1), "first").has_value());
  CHECK_FALSE(throttle.Note(7, kStart + Millis(2), "last").has_value());
  CHECK(throttle.Note(8, kStart) == std::optional<uint64_t>(1));
  std::vector<std::tuple<uid_t, uint64_t, std::string>> lines;
  auto report = [&](uid_t uid, uint64_t n, const std::string& last) {
    lines.emplace_back(uid, n, last);
  };
  throttle.Flush(kStart + kMinute - Millis(1), report);
  CHECK(lines.empty());
  throttle.Flush(kStart + kMinute, report);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == std::make_tuple(uid_t{7}, uint64_t{2}, std::string("last")));
  CHECK(throttle.tracked() == 1);  // 8 had nothing held back: forgotten
  // The reported line was the new window's: the next event of 7 in it is held back.
  CHECK_FALSE(throttle.Note(7, kStart + kMinute + Millis(1)).has_value());
  throttle.Flush(kStart + 2 * kMinute, report);
  CHECK(lines.size() == 2);
  throttle.Flush(kStart + 3 * kMinute, report);
  CHECK(lines.size() == 2);
  CHECK(throttle.tracked() == 0);
  CHECK_FALSE(throttle.NextFlush().has_value());
}

}  // namespace
}  // namespace gshare::unit_log_throttle
