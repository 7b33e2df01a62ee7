// Issue 24: `gshare acct --since/--until` read sacct's time forms, counted back from now.
#include <stdlib.h>
#include <time.h>

#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "base/begin_time.h"
#include "time_test_util.h"

namespace gshare::unit_past_time {
namespace {

using unit_time::kDay;
using unit_time::kHour;
using unit_time::kNow;
using unit_time::ScopedTz;

constexpr double kMidnight = kNow - 10.5 * kHour;

double PastOrDie(const char* text, double now = kNow) {
  Result<double> t = ParsePastTime(text, now);
  REQUIRE_MESSAGE(t.ok(), t.status().message());
  return t.value();
}

TEST_CASE("ParsePastTime reads now, now-DUR and now+DUR") {
  ScopedTz tz("UTC");
  CHECK(PastOrDie("now") == kNow);
  CHECK(PastOrDie("now-1day") == kNow - kDay);
  CHECK(PastOrDie("NOW-2hours") == kNow - 2 * kHour);
  CHECK(PastOrDie("now-90m") == kNow - 5400);
  CHECK(PastOrDie("now-1h30m") == kNow - 5400);
  CHECK(PastOrDie("now-3weeks") == kNow - 21 * kDay);
  CHECK(PastOrDie("now+1hour") == kNow + kHour);
}

TEST_CASE("ParsePastTime reads dates, and clock times as the last one") {
  ScopedTz tz("UTC");
  CHECK(PastOrDie("2024-03-15") == kMidnight);
  CHECK(PastOrDie("2024-03-14T23:59") == kMidnight - 60);
  CHECK(PastOrDie("2000-01-01") == 946684800);
  CHECK(PastOrDie("09:00") == kMidnight + 9 * kHour);   // earlier today
  CHECK(PastOrDie("11:00") == kMidnight - 13 * kHour);  // later today: yesterday's
  CHECK(PastOrDie("10:30") == kNow);                    // now itself
  CHECK(PastOrDie("today") == kMidnight);
  CHECK(PastOrDie("midnight") == kMidnight);
  CHECK(PastOrDie("Yesterday") == kMidnight - kDay);
  CHECK(PastOrDie("noon") == kMidnight - 12 * kHour);
  CHECK(PastOrDie("teatime") == kMidnight - 8 * kHour);
  CHECK(PastOrDie("fika") == kMidnight - 9 * kHour);
  CHECK(PastOrDie("@1700000000.5") == 1700000000.5);
  CHECK(PastOrDie(" today ") == kMidnight);
}

TEST_CASE("ParsePastTime reads local time") {
  ScopedTz tz("CET-1CEST,M3.5.0,M10.5.0/3");  // UTC+1 in March
  CHECK(PastOrDie("2024-03-15") == kMidnight - kHour);
  CHECK(PastOrDie("today") == kMidnight - kHour);
  CHECK(PastOrDie("11:00") == kMidnight + 10 * kHour);  // 10:00 UTC, before now
}

TEST_CASE("ParsePastTime rejects other input with one line quoting it") {
  ScopedTz tz("UTC");
  for (const char* bad : {"", "yesterday-ish", "now-", "now-xyz", "2024-13-01", "2024-02-30",
                          "25:00", "1day", "tomorrow"}) {
    Result<double> t = ParsePastTime(bad, kNow);
    CHECK_MESSAGE(!t.ok(), bad);
    if (t.ok()) continue;
    CHECK(t.status().message().find('\n') == std::string::npos);
    if (*bad != '\0') {
      CHECK(t.status().message().find(std::string("\"") + bad + "\"") != std::string::npos);
      CHECK(t.status().message().find("begin") == std::string::npos);
    }
  }
  CHECK(ParsePastTime("1day", kNow).status().message().find("yesterday") != std::string::npos);
}

}  // namespace
}  // namespace gshare::unit_past_time
