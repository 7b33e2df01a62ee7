#include "base/duration.h"

#include <cmath>
#include <doctest/doctest.h>

namespace gshare::unit_duration {
namespace {

using std::chrono::milliseconds;

int64_t Ms(std::string_view text) {
  Result<milliseconds> d = ParseDuration(text);
  INFO(text, ": ", d.status().message());
  REQUIRE(d.ok());
  return d.value().count();
}

std::string ErrorOf(std::string_view text) {
  Result<milliseconds> d = ParseDuration(text);
  INFO(text);
  REQUIRE_FALSE(d.ok());
  return d.status().message();
}

TEST_CASE("ParseDuration reads units, decimals and combinations") {
  CHECK(Ms("250ms") == 250);
  CHECK(Ms("20s") == 20'000);
  CHECK(Ms("1.5s") == 1'500);
  CHECK(Ms("0.25m") == 15'000);
  CHECK(Ms("5m") == 300'000);
  CHECK(Ms("2h") == 7'200'000);
  CHECK(Ms("1d") == 86'400'000);
  CHECK(Ms("1h30m") == 5'400'000);
  CHECK(Ms("1m30s500ms") == 90'500);
  CHECK(Ms("0s") == 0);
  CHECK(Ms(" 20s ") == 20'000);
  CHECK(Ms("0.0004s") == 0);  // rounded to the nearest millisecond
  CHECK(Ms("0.0005s") == 1);
}

TEST_CASE("ParseDuration reads a bare number as seconds") {
  CHECK(Ms("90") == 90'000);
  CHECK(Ms("0.5") == 500);
  CHECK(Ms("0") == 0);
}

TEST_CASE("ParseDuration reads Slurm's colon forms") {
  CHECK(Ms("05:30") == 330'000);       // MM:SS
  CHECK(Ms("90:00") == 5'400'000);     // leading field may exceed 59
  CHECK(Ms("01:02:03") == 3'723'000);  // HH:MM:SS
  CHECK(Ms("2-03:04:05") == 2 * 86'400'000LL + 3 * 3'600'000 + 4 * 60'000 + 5'000);
  CHECK(Ms("1-12") == 86'400'000LL + 12 * 3'600'000);
  CHECK(Ms("1-00:30") == 86'400'000LL + 30 * 60'000);
}

TEST_CASE("ParseDuration rejects bad input with a message quoting it") {
  CHECK(ErrorOf("") == "empty duration");
  CHECK(ErrorOf("   ") == "empty duration");
  CHECK(ErrorOf("-5s").find("\"-5s\"") != std::string::npos);
  CHECK(ErrorOf("-5s").find("negative") != std::string::npos);
  CHECK(ErrorOf("20x").find("\"20x\"") != std::string::npos);
  CHECK(ErrorOf("20x").find("unknown unit") != std::string::npos);
  for (const char* bad : {"abc", "s", "1.s", ".5s", "1h30", "1 h", "1:2:3:4", "1:75", "1-25:00",
                          "1-2-3", "1:", ":30", "+5s", "1.5.5s", "1e3s", "1-00:00:00:00"}) {
    std::string message = ErrorOf(bad);
    CHECK(message.find(std::string("\"") + bad + "\"") != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
  }
}

TEST_CASE("ParseDuration rejects overflow") {
  CHECK(ErrorOf("99999999999999999999s").find("too large") != std::string::npos);
  CHECK(ErrorOf("9223372036854775807s").find("too large") != std::string::npos);
  CHECK(ErrorOf("200000000000d").find("too large") != std::string::npos);
  CHECK(ErrorOf("9223372036854775807ms1ms").find("too large") != std::string::npos);
  CHECK(ErrorOf("999999999999-00:00:00").find("too large") != std::string::npos);
  // Past kMaxDuration is too large too: adding it to a clock must not overflow (issue 19).
  CHECK(ErrorOf("9223372036854775807ms").find("too large") != std::string::npos);
  CHECK(Ms("3650d") == kMaxDuration.count());
  CHECK(ErrorOf("3650d1ms").find("too large") != std::string::npos);
}

TEST_CASE("FormatDuration gives a short human form") {
  CHECK(FormatDuration(milliseconds(0)) == "0ms");
  CHECK(FormatDuration(milliseconds(350)) == "350ms");
  CHECK(FormatDuration(milliseconds(20'000)) == "20s");
  CHECK(FormatDuration(milliseconds(1'500)) == "1.5s");
  CHECK(FormatDuration(milliseconds(1'005)) == "1.005s");
  CHECK(FormatDuration(milliseconds(300'000)) == "5m");
  CHECK(FormatDuration(milliseconds(303'000)) == "5m03s");
  CHECK(FormatDuration(milliseconds(3'720'000)) == "1h02m");
  CHECK(FormatDuration(milliseconds(3'725'000)) == "1h02m");  // seconds dropped
  CHECK(FormatDuration(milliseconds(7'200'000)) == "2h");
  CHECK(FormatDuration(milliseconds(86'400'000LL * 3 + 4 * 3'600'000)) == "3d04h");
  CHECK(FormatDuration(milliseconds(-20'000)) == "-20s");
  CHECK(FormatDuration(milliseconds(INT64_MIN)).front() == '-');
}

TEST_CASE("FormatSeconds: tenths below ten seconds, whole seconds above, one word") {
  CHECK(FormatSeconds(0) == "0s");
  CHECK(FormatSeconds(0.04) == "0s");
  CHECK(FormatSeconds(0.35) == "400ms");
  CHECK(FormatSeconds(4.24) == "4.2s");
  CHECK(FormatSeconds(9.96) == "10s");
  CHECK(FormatSeconds(27.7) == "28s");
  CHECK(FormatSeconds(65.4) == "1m05s");
  CHECK(FormatSeconds(3725) == "1h02m");
  CHECK(FormatSeconds(-3) == "0s");
  CHECK(FormatSeconds(std::nan("")) == "0s");
  CHECK(FormatSeconds(HUGE_VAL) == "0s");
  CHECK(FormatSeconds(1e300) == FormatDuration(kMaxDuration));  // bounded, no overflow
}

TEST_CASE("FormatDuration output parses back") {
  for (int64_t ms : {0LL, 1LL, 999LL, 1'000LL, 1'500LL, 59'999LL, 60'000LL, 303'000LL, 3'720'000LL,
                     86'400'000LL, 90'000'000LL}) {
    CHECK(Ms(FormatDuration(milliseconds(ms))) == ms);
  }
}

}  // namespace
}  // namespace gshare::unit_duration
