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
}

TEST_CASE("job refs: an id, or Slurm's J_T for one task of a job array") {
  Result<JobRef> plain = ParseJobRef("48");
  REQUIRE(plain.ok());
  CHECK(plain->id == 48);
  CHECK_FALSE(plain->task.has_value());
  Result<JobRef> task = ParseJobRef("48_0");
  REQUIRE(task.ok());
  CHECK(task->id == 48);
  CHECK(task->task == 0);
  CHECK(ParseJobRef("48_999999999")->task == 999999999);
  for (const char* bad :
       {"48_", "_3", "48_-1", "48_x", "48_1_2", "48_1000000000", "0_1", "48__1"}) {
    INFO(bad);
    Result<JobRef> ref = ParseJobRef(bad);
    REQUIRE_FALSE(ref.ok());
    CHECK(ref.status().message().find(std::string("bad job id \"") + bad + "\"") == 0);
  }
  CHECK_FALSE(ParseJobIds("12,99999999999999999999").ok());
}

// CLI11's error for `args` given to a positional checked by JobIdCheck(by_name); "" when none.
std::string ParseIds(std::vector<std::string> args, bool by_name) {
  CLI::App app;
  std::vector<std::string> ids;
  app.add_option("ids", ids, "Job ids")->check(JobIdCheck(by_name));
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return std::string(e.what());
  }
  return std::string();
}

TEST_CASE("hostile users: a bad id on the command line is a usage error before any request") {
  auto parse = [](std::vector<std::string> args) { return ParseIds(std::move(args), false); };
  CHECK(parse({"12", "13"}).empty());
  CHECK(parse({"12_3"}).empty());
  CHECK(parse({"12_x"}).find("bad job id \"12_x\"") != std::string::npos);
  CHECK(parse({"-1"}).find("bad job id \"-1\"") != std::string::npos);
  CHECK(parse({"99999999999999999999"}).find("bad job id") != std::string::npos);
  CHECK(parse({"0"}).find("bad job id \"0\"") != std::string::npos);
  // No name hint where the command takes no -n.
  CHECK(parse({"train"}).find("-n train") == std::string::npos);
}

TEST_CASE("a job's name where an id goes: the error says how to select jobs by name") {
  auto parse = [](std::vector<std::string> args) { return ParseIds(std::move(args), true); };
  CHECK(parse({"12"}).empty());
  const std::string named = parse({"train-gpt2.v1"});
  CHECK(named.find("bad job id \"train-gpt2.v1\"") != std::string::npos);
  CHECK(named.find("; jobs by name: -n train-gpt2.v1") != std::string::npos);
  // Not a name: no hint (a negative number, a task of a bad form, shell metacharacters).
  CHECK(parse({"12_x"}).find("-n ") == std::string::npos);
  CHECK(parse({"a;b"}).find("-n ") == std::string::npos);
}

}  // namespace
}  // namespace gshare::unit_cli_jobs
