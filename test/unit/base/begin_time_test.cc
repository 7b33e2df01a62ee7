#include "base/begin_time.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "time_test_util.h"

namespace gshare::unit_begin_time {
namespace {

using std::chrono::milliseconds;

using unit_time::kDay;
using unit_time::kHour;
using unit_time::kNow;
using unit_time::ScopedTz;

double At(std::string_view text, double now = kNow) {
  Result<double> t = ParseBeginTime(text, now);
  INFO(text, ": ", t.status().message());
  REQUIRE(t.ok());
  return t.value();
}

std::string ErrorOf(std::string_view text) {
  Result<double> t = ParseBeginTime(text, kNow);
  INFO(text, " -> ", t.ok() ? t.value() : 0.0);
  REQUIRE_FALSE(t.ok());
  return t.status().message();
}

TEST_CASE("ParseBeginTime reads now and now+DUR") {
  ScopedTz tz("UTC");
  CHECK(At("now") == kNow);
  CHECK(At("  NoW ") == kNow);
  CHECK(At("now+1h") == kNow + kHour);
  CHECK(At("now+90s") == kNow + 90);
  CHECK(At("now+1h30m") == kNow + 5400);
  CHECK(At("now+1.5s") == kNow + 1.5);
  CHECK(At("now+1:30") == kNow + 90);  // ParseDuration's MM:SS
  CHECK(At("now+90") == kNow + 90);    // bare number: seconds, as Slurm
  CHECK(At("now+0") == kNow);
  CHECK(At("NOW+2H") == kNow + 2 * kHour);
}

TEST_CASE("ParseBeginTime reads Slurm's now+N<unit words>") {
  ScopedTz tz("UTC");
  CHECK(At("now+30seconds") == kNow + 30);
  CHECK(At("now+1second") == kNow + 1);
  CHECK(At("now+3minutes") == kNow + 180);
  CHECK(At("now+2hours") == kNow + 2 * kHour);
  CHECK(At("now+1hour") == kNow + kHour);
  CHECK(At("now+2days") == kNow + 2 * kDay);
  CHECK(At("now+1week") == kNow + 7 * kDay);
  CHECK(At("now+2WEEKS") == kNow + 14 * kDay);
}

TEST_CASE("ParseBeginTime reads HH:MM[:SS] as the next such time") {
  ScopedTz tz("UTC");
  CHECK(At("11:00") == kNow + 1800);
  CHECK(At("10:30") == kNow);  // equal to now: today
  CHECK(At("10:30:01") == kNow + 1);
  CHECK(At("10:29") == kNow - 60 + kDay);  // passed: tomorrow
  CHECK(At("9:00") == 1710579600);         // 2024-03-16 09:00
  CHECK(At("23:59:59") == 1710547199);
  CHECK(At("10:30", kNow + 0.5) == kNow + kDay);
  // Across a month and a year end: from 2024-12-31 23:59:59 the next 00:00 is in 2025.
  CHECK(At("00:00", 1735689599) == 1735689600);
  CHECK(At("tomorrow", 1735689599) == 1735689600);
}

TEST_CASE("ParseBeginTime reads dates and date-times") {
  ScopedTz tz("UTC");
  CHECK(At("2024-03-16") == 1710547200);
  CHECK(At("2024-3-16") == 1710547200);
  CHECK(At("2024-03-16T09:00") == 1710579600);
  CHECK(At("2024-03-16t09:00:30") == 1710579630);
  CHECK(At("2024-02-29") == 1709164800);  // leap year
  CHECK(At("2024-12-31T23:59:59") == 1735689599);
  CHECK(At("2000-02-29") == 951782400);
  CHECK(At("2020-01-01") == 1577836800);  // in the past: allowed, the job may start at once
}

TEST_CASE("ParseBeginTime reads the keywords") {
  ScopedTz tz("UTC");
  CHECK(At("today") == 1710460800);
  CHECK(At("tomorrow") == 1710547200);
  CHECK(At("midnight") == 1710547200);
  CHECK(At("noon") == 1710504000);
  CHECK(At("TeaTime") == 1710460800 + 16 * kHour);
  CHECK(At("noon", 1710504000) == 1710504000);         // at noon: now
  CHECK(At("noon", 1710504001) == 1710504000 + kDay);  // after: tomorrow's
  CHECK(At("midnight", 1710460800) == 1710460800);     // at midnight: now
}

TEST_CASE("ParseBeginTime reads @unix seconds") {
  ScopedTz tz("UTC");
  CHECK(At("@1700000000") == 1700000000);
  CHECK(At("@1700000000.25") == 1700000000.25);
  CHECK(At(" @0 ") == 0);
}

TEST_CASE("ParseBeginTime rejects out-of-range fields") {
  ScopedTz tz("UTC");
  CHECK(ErrorOf("2024-13-01") == "bad begin time \"2024-13-01\": month 13 out of range");
  CHECK(ErrorOf("2024-00-10").find("month 0 out of range") != std::string::npos);
  CHECK(ErrorOf("25:00") == "bad begin time \"25:00\": hour 25 out of range");
  CHECK(ErrorOf("12:60").find("minute 60 out of range") != std::string::npos);
  CHECK(ErrorOf("12:00:60").find("second 60 out of range") != std::string::npos);
  CHECK(ErrorOf("2024-02-30") == "bad begin time \"2024-02-30\": day 30 out of range for 2024-02");
  CHECK(ErrorOf("2023-02-29").find("day 29 out of range for 2023-02") != std::string::npos);
  CHECK(ErrorOf("2024-04-31").find("day 31 out of range") != std::string::npos);
  CHECK(ErrorOf("2024-01-00").find("day 0 out of range") != std::string::npos);
  CHECK(ErrorOf("2024-03-16T24:00").find("hour 24 out of range") != std::string::npos);
}

TEST_CASE("ParseBeginTime rejects other input with a one-line message quoting it") {
  ScopedTz tz("UTC");
  CHECK(ErrorOf("") == "empty begin time");
  CHECK(ErrorOf("  ") == "empty begin time");
  CHECK(ErrorOf("yesterday") ==
        "bad begin time \"yesterday\": expected now[+DUR], HH:MM[:SS], "
        "YYYY-MM-DD[THH:MM[:SS]], today, tomorrow, midnight, noon, teatime or @UNIX_SECONDS");
  CHECK(ErrorOf("now+5x").find("now+DUR") != std::string::npos);
  CHECK(ErrorOf("@abc").find("@UNIX_SECONDS") != std::string::npos);
  for (const char* bad : {"yesterday",
                          "now-1h",
                          "now+",
                          "now+5x",
                          "now+ 1h",
                          "now+1fortnight",
                          "now+-1h",
                          "now1h",
                          "@",
                          "@-5",
                          "@1e9",
                          "@1.",
                          "@.5",
                          "@1.2.3",
                          "12",
                          "12:5",
                          "12:30:5",
                          "123:00",
                          "12:30:",
                          ":30",
                          "2024-03-16T",
                          "2024-03-16 09:00",
                          "2024-03-16T9",
                          "24-03-16",
                          "2024/03/16",
                          "2024-03",
                          "20240-03-16",
                          "next week",
                          "today+1h",
                          "noon tomorrow"}) {
    std::string message = ErrorOf(bad);
    CHECK(message.find(std::string("\"") + bad + "\"") != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
  }
}

// Europe/Berlin: CET (+01:00) until 2024-03-31 02:00, then CEST (+02:00) until 2024-10-27 03:00.
TEST_CASE("ParseBeginTime follows local time across DST changes") {
  if (access("/usr/share/zoneinfo/Europe/Berlin", R_OK) != 0) return;
  ScopedTz tz("Europe/Berlin");
  const double kSat = 1711796400;  // 2024-03-30 12:00 CET
  CHECK(At("today", kSat) == 1711796400 - 12 * kHour);
  CHECK(At("tomorrow", kSat) == 1711839600);          // 2024-03-31 00:00 CET
  CHECK(At("2024-03-31T12:00", kSat) == 1711879200);  // CEST: 10:00 UTC
  CHECK(At("12:00", kSat) == kSat);
  CHECK(At("11:00", kSat) == 1711879200 - kHour);  // tomorrow 11:00 CEST: 22 hours on
  CHECK(At("now+1d", kSat) == kSat + kDay);        // a duration, not a calendar day
  // 02:30 on 2024-03-31 is skipped: read as CET, it is 03:30 CEST (PEP 495 fold=0).
  const double kSkipNight = 1711843200;  // 2024-03-31 01:00 CET
  CHECK(At("2024-03-31T02:30") == 1711848600);
  CHECK(At("02:30", kSkipNight) == 1711848600);
  CHECK(At("03:30", kSkipNight) == 1711848600);
  CHECK(At("01:59:59", kSkipNight) == kSkipNight + 3599);
  // 02:30 on 2024-10-27 happens twice: first at 00:30 UTC (CEST), then at 01:30 UTC (CET).
  CHECK(At("2024-10-27T02:30") == 1729989000);
  CHECK(At("02:30", 1729980000) == 1729989000);  // from 00:00 CEST: the first
  CHECK(At("02:30", 1729989900) == 1729992600);  // from the first 02:45 CEST: the second
  CHECK(At("02:30", 1729993500) == 1730079000);  // from the second 02:45 (CET): the next day
  CHECK(ErrorOf("2024-02-30").find("out of range") != std::string::npos);
}

milliseconds::rep Limit(std::string_view text) {
  Result<milliseconds> d = ParseTimeLimit(text);
  INFO(text, ": ", d.status().message());
  REQUIRE(d.ok());
  return d.value().count();
}

std::string LimitError(std::string_view text) {
  Result<milliseconds> d = ParseTimeLimit(text);
  INFO(text);
  REQUIRE_FALSE(d.ok());
  return d.status().message();
}

TEST_CASE("ParseTimeLimit reads a bare number as minutes") {
  CHECK(Limit("90") == 5'400'000);
  CHECK(Limit(" 10 ") == 600'000);
  CHECK(Limit("1.5") == 90'000);
  CHECK(Limit("0") == 0);
}

TEST_CASE("ParseTimeLimit reads Slurm's colon forms, units and UNLIMITED") {
  CHECK(Limit("05:30") == 330'000);       // MM:SS
  CHECK(Limit("01:02:03") == 3'723'000);  // HH:MM:SS
  CHECK(Limit("2-03") == 2 * 86'400'000LL + 3 * 3'600'000);
  CHECK(Limit("1-00:30") == 86'400'000LL + 30 * 60'000);
  CHECK(Limit("1-00:00:30") == 86'400'000LL + 30'000);
  CHECK(Limit("90s") == 90'000);
  CHECK(Limit("1h30m") == 5'400'000);
  CHECK(Limit("1H") == 3'600'000);
  CHECK(Limit("UNLIMITED") == 0);
  CHECK(Limit("infinite") == 0);
  CHECK(Limit("Infinite") == 0);
}

TEST_CASE("ParseTimeLimit rejects bad input with a one-line message quoting it") {
  CHECK(LimitError("") == "empty time limit");
  CHECK(LimitError("1:75") ==
        "bad time limit \"1:75\": field 75 out of range; expected minutes, MM:SS, HH:MM:SS, "
        "D-HH[:MM[:SS]], a duration such as 1h30m, or UNLIMITED");
  CHECK(LimitError("10x").find("\"10x\": unknown unit \"x\"") != std::string::npos);
  CHECK(LimitError("99999999999999999999").find("too large") != std::string::npos);
  for (const char* bad : {"-5", "abc", "10x", "unlimitedx", "1.", ".", "1:2:3:4", "+5"}) {
    std::string message = LimitError(bad);
    CHECK(message.find(std::string("\"") + bad + "\"") != std::string::npos);
    CHECK(message.find("UNLIMITED") != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
  }
}

}  // namespace
}  // namespace gshare::unit_begin_time
