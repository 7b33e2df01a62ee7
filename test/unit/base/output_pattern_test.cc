#include "base/output_pattern.h"

#include <doctest/doctest.h>

namespace gshare::unit_output_pattern {
namespace {

std::string Expand(std::string_view pattern) {
  return ExpandOutputPattern(pattern, 42, "train", "alice");
}

TEST_CASE("ExpandOutputPattern replaces %j, %x, %u and %%") {
  CHECK(Expand("%j.out") == "42.out");
  CHECK(Expand("logs/%x-%j.log") == "logs/train-42.log");
  CHECK(Expand("/home/%u/%x/%j") == "/home/alice/train/42");
  CHECK(Expand("100%%-%j") == "100%-42");
  CHECK(Expand("%%j") == "%j");  // %% first, then a plain j
  CHECK(Expand("%j%j") == "4242");
  CHECK(Expand("plain.txt") == "plain.txt");
  CHECK(Expand("") == "");
  CHECK(ExpandOutputPattern("%j", 9'007'199'254'740'993, "", "") == "9007199254740993");
}

TEST_CASE("ExpandOutputPattern keeps unknown symbols and a trailing %") {
  CHECK(Expand("%5j") == "%5j");
  CHECK(Expand("x%") == "x%");
  CHECK(Expand("%") == "%");
  CHECK(Expand("%J") == "%J");  // case matters, as in Slurm (%J there is jobid.stepid)
}

TEST_CASE("ExpandOutputPattern replaces %A and %a of an array task (issue 24)") {
  CHECK(ExpandOutputPattern("%A_%a.out", 15, "sweep", "u", 12, 3) == "12_3.out");
  CHECK(ExpandOutputPattern("%x-%j-%A-%a", 12, "sweep", "u", 12, 0) == "sweep-12-12-0");
  CHECK(ExpandOutputPattern("%%A%%a", 15, "", "", 12, 3) == "%A%a");
  // Not an array task: %A is the job's own id (as in Slurm), %a nothing.
  CHECK(Expand("%A_%a.out") == "42_.out");
  CHECK(ExpandOutputPattern("%A", 42, "", "", 12) == "42");  // no task id: no array
}

TEST_CASE("ExpandOutputPattern inserts names as they are") {
  CHECK(ExpandOutputPattern("%x.out", 1, "a%jb", "u") == "a%jb.out");  // not expanded again
  CHECK(ExpandOutputPattern("%x-%u", 1, "", "") == "-");
}

}  // namespace
}  // namespace gshare::unit_output_pattern
