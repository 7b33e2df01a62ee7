// Sizes as written in gshare.toml and on the command line: units, case, percentages,
// rejections, and the human-readable form.
#include "base/byte_size.h"

#include <doctest/doctest.h>

namespace gshare::unit_byte_size {
namespace {

constexpr uint64_t kKiB = 1ull << 10;
constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kGiB = 1ull << 30;
constexpr uint64_t kTiB = 1ull << 40;

uint64_t Parse(const char* text) {
  Result<uint64_t> r = ParseByteSize(text);
  INFO(text);
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  return r.value();
}

TEST_CASE("ParseByteSize reads bare bytes") {
  CHECK(Parse("123") == 123);
  CHECK(Parse("0") == 0);
  CHECK(Parse("100B") == 100);
  CHECK(Parse("100b") == 100);
}

TEST_CASE("ParseByteSize: K/M/G/T and KiB.. are powers of 1024, KB.. powers of 1000") {
  CHECK(Parse("512K") == 512 * kKiB);
  CHECK(Parse("512KiB") == 524288);
  CHECK(Parse("512K") == 524288);
  CHECK(Parse("300M") == 300 * kMiB);
  CHECK(Parse("300MiB") == 300 * kMiB);
  CHECK(Parse("24GiB") == 24 * kGiB);
  CHECK(Parse("2T") == 2 * kTiB);
  CHECK(Parse("2TiB") == 2 * kTiB);
  CHECK(Parse("64MB") == 64'000'000);
  CHECK(Parse("1KB") == 1000);
  CHECK(Parse("3GB") == 3'000'000'000ull);
  CHECK(Parse("2TB") == 2'000'000'000'000ull);
}

TEST_CASE("ParseByteSize accepts fractions with a unit") {
  CHECK(Parse("1.5G") == 3 * kGiB / 2);
  CHECK(Parse("1.5G") == 1'610'612'736ull);
  CHECK(Parse("0.5K") == 512);
  CHECK(Parse("1.5KB") == 1500);
  CHECK(Parse("2.25MiB") == 9 * kMiB / 4);
}

TEST_CASE("ParseByteSize suffixes are case-insensitive") {
  CHECK(Parse("512k") == 524288);
  CHECK(Parse("512kib") == 524288);
  CHECK(Parse("512KIB") == 524288);
  CHECK(Parse("512kIb") == 524288);
  CHECK(Parse("64mb") == 64'000'000);
  CHECK(Parse("64Mb") == 64'000'000);
  CHECK(Parse("1.5g") == 1'610'612'736ull);
  CHECK(Parse("24gib") == 24 * kGiB);
}

TEST_CASE("ParseByteSize allows a space before the unit") {
  CHECK(Parse("512 KiB") == 524288);
  CHECK(Parse("64 MB") == 64'000'000);
}

TEST_CASE("ParseByteSize rejects what is not a size, naming the text") {
  for (const char* text : {"", "abc", "12X", "-5", "1.5", "1.5B", "5%%", "5%", "K", "KiB", "1KiBB",
                           "1Ki", "1e3", "1.2.3", "12 X", "1P", "0x10", "+5", "99999999999T"}) {
    Result<uint64_t> r = ParseByteSize(text);
    INFO("text: \"", text, "\"");
    CHECK_FALSE(r.ok());
    if (!r.ok()) {
      CHECK(r.status().message().find("not a size") != std::string::npos);
      CHECK(r.status().message().find("\"" + std::string(text) + "\"") != std::string::npos);
    }
  }
}

TEST_CASE("ParseByteSizeOrPercent takes a percentage of the whole") {
  Result<uint64_t> r = ParseByteSizeOrPercent("50%", 64 * kGiB);
  REQUIRE(r.ok());
  CHECK(r.value() == 32 * kGiB);
  r = ParseByteSizeOrPercent("100%", 1000);
  REQUIRE(r.ok());
  CHECK(r.value() == 1000);
  r = ParseByteSizeOrPercent("0%", 1000);
  REQUIRE(r.ok());
  CHECK(r.value() == 0);
  r = ParseByteSizeOrPercent("12.5%", 800);
  REQUIRE(r.ok());
  CHECK(r.value() == 100);
  r = ParseByteSizeOrPercent("25%", 0);
  REQUIRE(r.ok());
  CHECK(r.value() == 0);
}

TEST_CASE("ParseByteSizeOrPercent takes a size as a size, whatever the whole") {
  Result<uint64_t> r = ParseByteSizeOrPercent("64MiB", 1000);
  REQUIRE(r.ok());
  CHECK(r.value() == 64 * kMiB);
  r = ParseByteSizeOrPercent("123", 0);
  REQUIRE(r.ok());
  CHECK(r.value() == 123);
}

TEST_CASE("ParseByteSizeOrPercent rejects bad percentages and bad sizes") {
  for (const char* text : {"101%", "-1%", "%", "5%%", "abc%", "50 %", "1e9%", "", "12X", "1.5"}) {
    INFO("text: \"", text, "\"");
    CHECK_FALSE(ParseByteSizeOrPercent(text, 1000).ok());
  }
  Result<uint64_t> r = ParseByteSizeOrPercent("150%", 1000);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("\"150%\"") != std::string::npos);
}

TEST_CASE("FormatBytes writes bytes for people") {
  CHECK(FormatBytes(0) == "0B");
  CHECK(FormatBytes(512) == "512B");
  CHECK(FormatBytes(1023) == "1023B");
  CHECK(FormatBytes(1024) == "1.0KiB");
  CHECK(FormatBytes(1536) == "1.5KiB");
  CHECK(FormatBytes(300 * kMiB) == "300MiB");
  CHECK(FormatBytes(3 * kGiB / 2) == "1.5GiB");
  CHECK(FormatBytes(80 * kGiB) == "80GiB");
  CHECK(FormatBytes(2 * kTiB) == "2.0TiB");
  CHECK(FormatBytes(2048 * kTiB) == "2048TiB");  // TiB is the largest unit
}

TEST_CASE("FormatBytes and ParseByteSize agree on whole binary units") {
  for (uint64_t n : {512 * kKiB, 300 * kMiB, 24 * kGiB, 3 * kGiB / 2}) {
    std::string text = FormatBytes(n);
    INFO(text);
    CHECK(Parse(text.c_str()) == n);
  }
}

}  // namespace
}  // namespace gshare::unit_byte_size
