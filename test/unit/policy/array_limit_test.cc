// Issue 24: a job array's "%N" limits how many of its tasks run at once (Slurm's
// JobArrayTaskLimit), decided with every other start.
#include <doctest/doctest.h>

#include "admission_test_util.h"
#include "policy/admission.h"

namespace gshare::unit_array_limit {
namespace {

using admission_test::Reason;
using admission_test::Started;

AdmissionJob Task(int64_t id, int64_t array, int64_t limit) {
  AdmissionJob j;
  j.id = id;
  j.submit_time = static_cast<double>(id);
  j.array_job_id = array;
  j.array_limit = limit;
  return j;
}

TEST_CASE("an array's %N limit holds back its other tasks, not the slots") {
  // Array 10 of four tasks, %2, and a plain job submitted after it; 4 slots free.
  std::vector<AdmissionJob> pending = {Task(10, 10, 2), Task(11, 10, 2), Task(12, 10, 2),
                                       Task(13, 10, 2), Task(14, 0, 0)};
  AdmissionLimits limits{1, 4};
  AdmissionResult r = Admit(pending, {}, limits, 0);
  CHECK(Started(pending, r) == std::vector<int64_t>{10, 11, 14});
  CHECK(Reason(pending, r, 12) == kReasonArrayLimit);
  CHECK(Reason(pending, r, 13) == kReasonArrayLimit);

  // Two tasks run: none starts, however many slots are free.
  std::vector<AdmissionJob> rest = {Task(12, 10, 2), Task(13, 10, 2)};
  limits.array_running = {{10, 2}};
  r = Admit(rest, {{"0", 2}}, limits, 0);
  CHECK(r.start.empty());
  CHECK(Reason(rest, r, 12) == kReasonArrayLimit);
  // One ended: one more starts.
  limits.array_running = {{10, 1}};
  r = Admit(rest, {{"0", 1}}, limits, 0);
  CHECK(Started(rest, r) == std::vector<int64_t>{12});
  CHECK(Reason(rest, r, 13) == kReasonArrayLimit);
}

TEST_CASE("arrays count apart; no limit means slots alone decide") {
  std::vector<AdmissionJob> pending = {Task(1, 1, 1), Task(2, 1, 1), Task(3, 3, 1),
                                       Task(4, 3, 1), Task(5, 5, 0), Task(6, 5, 0)};
  AdmissionResult r = Admit(pending, {}, AdmissionLimits{1, 10}, 0);
  CHECK(Started(pending, r) == std::vector<int64_t>{1, 3, 5, 6});
  CHECK(Reason(pending, r, 2) == kReasonArrayLimit);
  CHECK(Reason(pending, r, 4) == kReasonArrayLimit);
  // Full slots: a task within its limit waits for Resources like any job; one over its
  // limit says so, and does not take the Resources reason from the next one.
  AdmissionLimits full{1, 1};
  full.array_running = {{1, 1}};
  std::vector<AdmissionJob> two = {Task(2, 1, 1), Task(3, 3, 1)};
  r = Admit(two, {{"0", 1}}, full, 0);
  CHECK(r.start.empty());
  CHECK(Reason(two, r, 2) == kReasonArrayLimit);
  CHECK(Reason(two, r, 3) == kReasonResources);
}

TEST_CASE("a held or dependent task keeps its own reason before the array's") {
  AdmissionJob held = Task(2, 1, 1);
  held.held = true;
  std::vector<AdmissionJob> pending = {held, Task(3, 1, 1)};
  AdmissionLimits limits{1, 4};
  limits.array_running = {{1, 1}};
  AdmissionResult r = Admit(pending, {}, limits, 0);
  CHECK(r.start.empty());
  CHECK(Reason(pending, r, 2) == kReasonHeld);
  CHECK(Reason(pending, r, 3) == kReasonArrayLimit);
}

}  // namespace
}  // namespace gshare::unit_array_limit
