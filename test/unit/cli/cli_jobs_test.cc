// Job ids as users type them: digits only, never sent to the daemon otherwise.
#include <doctest/doctest.h>

#include "cli/cli.h"

namespace gshare::unit_cli_jobs {
namespace {

TEST_CASE("hostile users: a job id is 1 to INT64_MAX in decimal digits, nothing else") {
  CHECK(ParseJobId("1").value() == 1);
  CHECK(ParseJobId("9223372036854775807").value() == INT64_MAX);
  for (const char* bad : {"-1", "0", "", "+3", " 7", "7 ", "0x10", "1e3", "12a",
                          "9223372036854775808", "99999999999999999999"}) {
    INFO(bad);
    Result<int64_t> id = ParseJobId(bad);
    REQUIRE_FALSE(id.ok());
    CHECK(id.status().message() == std::string("bad job id \"") + bad +
                                       "\": a job id is a whole number from 1 to "
                                       "9223372036854775807");
  }
  CHECK(ParseJobIds("12,14").value() == std::set<int64_t>{12, 14});
  CHECK_FALSE(ParseJobIds("12,99999999999999999999").ok());
}

TEST_CASE("hostile users: a bad id on the command line is a usage error before any request") {
  auto parse = [](std::vector<std::string> args) {
    CLI::App app;
    std::vector<int64_t> ids;
    app.add_option("ids", ids, "Job ids")->check(JobIdCheck());
    std::reverse(args.begin(), args.end());
    try {
      app.parse(args);
    } catch (const CLI::ParseError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(parse({"12", "13"}).empty());
  CHECK(parse({"-1"}).find("bad job id \"-1\"") != std::string::npos);
  CHECK(parse({"99999999999999999999"}).find("bad job id") != std::string::npos);
  CHECK(parse({"0"}).find("bad job id \"0\"") != std::string::npos);
}

}  // namespace
}  // namespace gshare::unit_cli_jobs
