#include "base/job_token.h"

#include <doctest/doctest.h>

#include <set>

namespace gshare::unit_job_token {
namespace {

TEST_CASE("Job tokens are 32 hex digits, each new one different, compared exactly") {
  std::set<std::string> seen;
  for (int i = 0; i < 64; ++i) {
    Result<std::string> t = NewJobToken();
    REQUIRE(t.ok());
    CHECK(t->size() == 2 * kJobTokenBytes);
    CHECK(t->find_first_not_of("0123456789abcdef") == std::string::npos);
    seen.insert(*t);
  }
  CHECK(seen.size() == 64);
  const uint8_t bytes[kJobTokenBytes] = {0x00, 0x01, 0xab, 0xff, 0x10, 0, 0, 0,
                                         0,    0,    0,    0,    0,    0, 0, 0x7e};
  CHECK(JobTokenHex(bytes) == "0001abff10000000000000000000007e");
  CHECK(JobTokensEqual("0a1b", "0a1b"));
  CHECK_FALSE(JobTokensEqual("0a1b", "0a1c"));
  CHECK_FALSE(JobTokensEqual("0a1b", "0a1"));
  // A job without a token (a record from before tokens) admits nobody.
  CHECK_FALSE(JobTokensEqual("", ""));
}

}  // namespace
}  // namespace gshare::unit_job_token
