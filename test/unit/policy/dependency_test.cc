#include "policy/dependency.h"

#include <doctest/doctest.h>

#include <map>

namespace gshare::unit_dependency {
namespace {

constexpr DependencyType kOk = DependencyType::kAfterOk;
constexpr DependencyType kAny = DependencyType::kAfterAny;
constexpr DependencyType kNotOk = DependencyType::kAfterNotOk;
constexpr DependencyState kWaiting = DependencyState::kWaiting;
constexpr DependencyState kSatisfied = DependencyState::kSatisfied;
constexpr DependencyState kNever = DependencyState::kNever;

std::vector<Dependency> Deps(std::string_view text) {
  Result<std::vector<Dependency>> deps = ParseDependencies(text);
  INFO(text, ": ", deps.status().message());
  REQUIRE(deps.ok());
  return deps.value();
}

std::string ErrorOf(std::string_view text) {
  Result<std::vector<Dependency>> deps = ParseDependencies(text);
  INFO(text);
  REQUIRE_FALSE(deps.ok());
  return deps.status().message();
}

TEST_CASE("ParseDependencies reads Slurm's list") {
  CHECK(Deps("afterok:1") == std::vector<Dependency>{{kOk, 1}});
  CHECK(Deps("afterok:1:2,afterany:3") == std::vector<Dependency>{{kOk, 1}, {kOk, 2}, {kAny, 3}});
  CHECK(Deps("afternotok:7,afterok:8") == std::vector<Dependency>{{kNotOk, 7}, {kOk, 8}});
  CHECK(Deps(" AfterOK:12 ") == std::vector<Dependency>{{kOk, 12}});
  CHECK(Deps("afterok:5,afterok:5") == std::vector<Dependency>{{kOk, 5}, {kOk, 5}});
  CHECK(Deps("afterany:9223372036854775807") == std::vector<Dependency>{{kAny, INT64_MAX}});
  // Blanks around entries and ids, as typed by hand.
  CHECK(Deps("afterok:1, afterany:2") == std::vector<Dependency>{{kOk, 1}, {kAny, 2}});
  CHECK(Deps("afterok: 3 :4 , singleton") ==
        std::vector<Dependency>{{kOk, 3}, {kOk, 4}, {DependencyType::kSingleton, 0}});
}

TEST_CASE("ParseDependencies rejects bad lists with a one-line message quoting them") {
  CHECK(ErrorOf("") == "empty dependency list");
  CHECK(ErrorOf(" ") == "empty dependency list");
  CHECK(ErrorOf("after:1") ==
        "bad dependency \"after:1\": unknown type \"after\" (use afterok, afterany, afternotok or "
        "singleton)");
  CHECK(ErrorOf("singleton:3").find("singleton takes no job id") != std::string::npos);
  CHECK(ErrorOf("afterok") == "bad dependency \"afterok\": missing job id after \"afterok\"");
  CHECK(ErrorOf("afterok:").find("missing job id") != std::string::npos);
  CHECK(ErrorOf("afterok:1:").find("missing job id") != std::string::npos);
  CHECK(ErrorOf("afterok:1::2").find("missing job id") != std::string::npos);
  CHECK(ErrorOf("afterok:x").find("job id \"x\" is not a positive integer") != std::string::npos);
  CHECK(ErrorOf("afterok:0").find("job id \"0\" is not a positive integer") != std::string::npos);
  CHECK(ErrorOf("afterok:-1").find("job id \"-1\" is not a positive integer") != std::string::npos);
  CHECK(ErrorOf("afterok:9223372036854775808").find("too large") != std::string::npos);
  CHECK(ErrorOf("afterok:1?afterany:2").find("'?' (any one of) is not supported") !=
        std::string::npos);
  CHECK(ErrorOf("afterok:1,").find("empty entry") != std::string::npos);
  CHECK(ErrorOf(",afterok:1").find("empty entry") != std::string::npos);
  for (const char* bad : {"afterok:1,,afterany:2", "afterok:1+60", "afterok:1 2", "afterok 1", ":1",
                          "afterok:1.5", "afterok:+1", "afterany:1,afterok"}) {
    std::string message = ErrorOf(bad);
    CHECK(message.find(std::string("\"") + bad + "\"") != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
  }
}

TEST_CASE("ParseAfter gives afterok for each id") {
  Result<std::vector<Dependency>> deps = ParseAfter("1,2");
  REQUIRE(deps.ok());
  CHECK(deps.value() == std::vector<Dependency>{{kOk, 1}, {kOk, 2}});
  REQUIRE(ParseAfter("1, 2").ok());
  CHECK(ParseAfter("1, 2").value() == std::vector<Dependency>{{kOk, 1}, {kOk, 2}});
  REQUIRE(ParseAfter(" 42 ").ok());
  CHECK(ParseAfter(" 42 ").value() == std::vector<Dependency>{{kOk, 42}});
  CHECK(ParseAfter("").status().message() == "empty job id list");
  CHECK(ParseAfter("1,,2").status().message().find("missing job id") != std::string::npos);
  CHECK(ParseAfter("1,x").status().message() ==
        "bad dependency \"1,x\": job id \"x\" is not a positive integer");
  CHECK_FALSE(ParseAfter("0").ok());
  CHECK_FALSE(ParseAfter("afterok:1").ok());
}

TEST_CASE("FormatDependencies groups consecutive entries and parses back") {
  CHECK(FormatDependencies({}) == "");
  CHECK(FormatDependencies({{kOk, 1}, {kOk, 2}, {kAny, 3}}) == "afterok:1:2,afterany:3");
  CHECK(FormatDependencies({{kNotOk, 4}}) == "afternotok:4");
  CHECK(FormatDependencies({{kOk, 1}, {kAny, 2}, {kOk, 3}}) == "afterok:1,afterany:2,afterok:3");
  for (const std::vector<Dependency>& deps : std::vector<std::vector<Dependency>>{
           {{kOk, 1}},
           {{kOk, 1}, {kOk, 2}, {kAny, 3}},
           {{kNotOk, 10}, {kOk, 3}, {kNotOk, 10}, {kAny, INT64_MAX}},
       }) {
    CHECK(Deps(FormatDependencies(deps)) == deps);
  }
}

TEST_CASE("EvaluateDependency follows Slurm's meaning of each type") {
  using S = JobState;
  for (S waiting : {S::kPending, S::kRunning, S::kSuspended}) {
    CHECK(EvaluateDependency(kOk, waiting) == kWaiting);
    CHECK(EvaluateDependency(kAny, waiting) == kWaiting);
    CHECK(EvaluateDependency(kNotOk, waiting) == kWaiting);
  }
  CHECK(EvaluateDependency(kOk, S::kCompleted) == kSatisfied);
  CHECK(EvaluateDependency(kAny, S::kCompleted) == kSatisfied);
  CHECK(EvaluateDependency(kNotOk, S::kCompleted) == kNever);
  for (S failed : {S::kFailed, S::kCancelled, S::kTimeout, S::kLost}) {
    CHECK(EvaluateDependency(kOk, failed) == kNever);
    CHECK(EvaluateDependency(kAny, failed) == kSatisfied);
    CHECK(EvaluateDependency(kNotOk, failed) == kSatisfied);
  }
  for (DependencyType type : {kOk, kAny, kNotOk}) {
    CHECK(EvaluateDependency(type, std::nullopt) == kNever);
  }
}

TEST_CASE("EvaluateDependencies combines: never, else waiting, else satisfied") {
  std::map<int64_t, JobState> states = {{1, JobState::kCompleted},
                                        {2, JobState::kRunning},
                                        {3, JobState::kFailed},
                                        {4, JobState::kPending}};
  auto state_of = [&](int64_t job) -> std::optional<JobState> {
    auto it = states.find(job);
    if (it == states.end()) return std::nullopt;
    return it->second;
  };
  CHECK(EvaluateDependencies({}, state_of, false) == kSatisfied);
  CHECK(EvaluateDependencies({{kOk, 1}}, state_of, false) == kSatisfied);
  CHECK(EvaluateDependencies({{kOk, 1}, {kAny, 3}, {kNotOk, 3}}, state_of, false) == kSatisfied);
  CHECK(EvaluateDependencies({{kOk, 1}, {kOk, 2}}, state_of, false) == kWaiting);
  CHECK(EvaluateDependencies({{kOk, 2}, {kOk, 3}}, state_of, false) ==
        kNever);  // never beats waiting
  CHECK(EvaluateDependencies({{kOk, 3}, {kOk, 2}}, state_of, false) == kNever);
  CHECK(EvaluateDependencies({{kAny, 4}, {kOk, 99}}, state_of, false) ==
        kNever);  // 99 does not exist
  CHECK(EvaluateDependencies({{kAny, 4}, {kNotOk, 2}}, state_of, false) == kWaiting);
  // singleton: waits while an earlier job of its name and user lives, then holds; a dependency
  // that can never hold still wins.
  const Dependency single{DependencyType::kSingleton, 0};
  CHECK(EvaluateDependencies({single}, state_of, false) == kSatisfied);
  CHECK(EvaluateDependencies({single}, state_of, true) == kWaiting);
  CHECK(EvaluateDependencies({single, {kOk, 1}}, state_of, true) == kWaiting);
  CHECK(EvaluateDependencies({single, {kOk, 3}}, state_of, true) == kNever);
}

TEST_CASE("singleton parses alone or beside others and formats back the same") {
  Result<std::vector<Dependency>> d = ParseDependencies("singleton");
  REQUIRE(d.ok());
  CHECK(d.value() == std::vector<Dependency>{{DependencyType::kSingleton, 0}});
  d = ParseDependencies("afterok:4:5,SINGLETON,afterany:6");
  REQUIRE(d.ok());
  CHECK(FormatDependencies(d.value()) == "afterok:4:5,singleton,afterany:6");
  CHECK(ParseDependencies(FormatDependencies(d.value())).value() == d.value());
  // The jobs it names leave the singleton out; a list without one has none.
  CHECK(NamedJobs(d.value()) == std::vector<int64_t>{4, 5, 6});
  CHECK(HasSingleton(d.value()));
  CHECK_FALSE(HasSingleton(ParseDependencies("afterok:4").value()));
}

}  // namespace
}  // namespace gshare::unit_dependency
