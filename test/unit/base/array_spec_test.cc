#include "base/array_spec.h"

#include <doctest/doctest.h>

#include <string>

namespace gshare::unit_array_spec {
namespace {

using Ids = std::vector<int64_t>;

Ids TaskIds(std::string_view text) {
  Result<ArraySpec> spec = ParseArraySpec(text);
  REQUIRE_MESSAGE(spec.ok(), spec.status().message());
  return spec->task_ids;
}

std::string Error(std::string_view text) {
  Result<ArraySpec> spec = ParseArraySpec(text);
  return spec.ok() ? "(accepted)" : spec.status().message();
}

TEST_CASE("ParseArraySpec reads sbatch's ranges, lists and steps") {
  CHECK(TaskIds("0-3") == Ids{0, 1, 2, 3});
  CHECK(TaskIds("1,3,5") == Ids{1, 3, 5});
  CHECK(TaskIds("0-15:4") == Ids{0, 4, 8, 12});
  CHECK(TaskIds("1-7:2") == Ids{1, 3, 5, 7});
  CHECK(TaskIds("0-14:4") == Ids{0, 4, 8, 12});  // the step stops before the end
  CHECK(TaskIds("7") == Ids{7});
  CHECK(TaskIds("5-5") == Ids{5});
  CHECK(TaskIds("8,0-2,4-6:2") == Ids{0, 1, 2, 4, 6, 8});  // sorted
  CHECK(TaskIds("1,1,0-2") == Ids{0, 1, 2});               // a repeat counts once
  CHECK(TaskIds("999999999") == Ids{kMaxArrayTaskId});
  CHECK(ParseArraySpec("0-9")->limit == 0);
}

TEST_CASE("ParseArraySpec reads the %N limit of tasks running at once") {
  Result<ArraySpec> spec = ParseArraySpec("0-9%2");
  REQUIRE(spec.ok());
  CHECK(spec->limit == 2);
  CHECK(spec->task_ids.size() == 10);
  spec = ParseArraySpec("1,3%1");
  REQUIRE(spec.ok());
  CHECK(spec->task_ids == Ids{1, 3});
  CHECK(spec->limit == 1);
  CHECK(ParseArraySpec("0-3%10")->limit == 10);  // above the count: no effect, not an error
}

TEST_CASE("ParseArraySpec rejects bad specs with one line") {
  CHECK(Error("5-1") == "range \"5-1\" ends before it begins");
  CHECK(Error("a-b") == "task id \"a\" is not a number");
  CHECK(Error("0-b") == "task id \"b\" is not a number");
  CHECK(Error("0-9%0") == "limit %0: at least 1 task must run at once");
  CHECK(Error("0-9%") == "limit \"\" is not a number");
  CHECK(Error("0-9%x") == "limit \"x\" is not a number");
  CHECK(Error("0-9%2%3") == "limit \"2%3\" is not a number");
  CHECK(Error("0-15:0") == "step 0 in \"0-15:0\"");
  CHECK(Error("0-15:") == "step \"\" is not a number");
  CHECK(Error("") == "no task ids");
  CHECK(Error("%2") == "no task ids");
  CHECK(Error("1,,2") == "an empty item in the list");
  CHECK(Error("1,") == "an empty item in the list");
  CHECK(Error("-1") == "task id \"\" is not a number");
  CHECK(Error("1-2-3") == "task id \"2-3\" is not a number");
  CHECK(Error(" 1") == "task id \" 1\" is not a number");
  CHECK(Error("+1") == "task id \"+1\" is not a number");
  CHECK(Error("1000000000") == "task id \"1000000000\" is above 999999999");
  CHECK(Error("5:2") == "task id \"5:2\" is not a number");  // a step needs a range
}

TEST_CASE("ParseArraySpec allows at most 10,000 tasks, counted before they are listed") {
  CHECK(TaskIds("0-9999").size() == 10'000);
  CHECK(TaskIds("0-19999:2").size() == 10'000);
  CHECK(Error("0-10000") == "10001 tasks, at most 10000");
  CHECK(Error("0-999999999") == "1000000000 tasks, at most 10000");
  CHECK(Error("0-9999,10000") == "10001 tasks, at most 10000");
  // Overlapping ranges count their tasks once.
  CHECK(TaskIds("0-9999,0-9999,5000-9999").size() == 10'000);
  std::string list;
  for (int i = 0; i <= 10'000; ++i) list += (i > 0 ? "," : "") + std::to_string(i);
  CHECK(Error(list) == "10001 tasks, at most 10000");
}

}  // namespace
}  // namespace gshare::unit_array_spec
