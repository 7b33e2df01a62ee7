// Fair share between users in admission (issue 21): at one priority, round robin between
// users (fewest running first, then the least recently started), and the per-user limit.
#include "policy/admission.h"

#include <doctest/doctest.h>

#include "admission_test_util.h"

#include <string>
#include <vector>

namespace gshare::unit_admission_fair {
namespace {

using admission_test::Reason;
using admission_test::Started;

AdmissionJob Job(int64_t id, uid_t uid, int priority = 0) {
  AdmissionJob j;
  j.id = id;
  j.uid = uid;
  j.priority = priority;
  j.submit_time = static_cast<double>(id);  // ids in submission order
  return j;
}

TEST_CASE("Admission: one slot goes round robin between users, not first come first served") {
  // User 1001 submitted three jobs before 1002's two and 1003's one.
  std::vector<AdmissionJob> pending = {Job(1, 1001), Job(2, 1001), Job(3, 1001),
                                       Job(4, 1002), Job(5, 1002), Job(6, 1003)};
  AdmissionUsers users;
  std::vector<int64_t> order;
  while (!pending.empty()) {
    // max_running 1: one job at a time, each ending before the next admission.
    users.running.clear();
    AdmissionResult r = Admit(pending, {}, {1, 1}, 100, &users);
    REQUIRE(r.start.size() == 1);
    order.push_back(pending[r.start[0].index].id);
    pending.erase(pending.begin() + static_cast<long>(r.start[0].index));
  }
  // Users never started first (by their first submission), then the one started longest ago.
  CHECK(order == std::vector<int64_t>{1, 4, 6, 2, 5, 3});
}

TEST_CASE("Admission: the user with the fewest running jobs comes first") {
  std::vector<AdmissionJob> pending = {Job(1, 1001), Job(2, 1001), Job(3, 1002), Job(4, 1002)};
  AdmissionUsers users;
  users.running[1001] = 2;  // 1001 runs two jobs already
  AdmissionResult r = Admit(pending, {{"0", 2}}, {1, 4}, 100, &users);
  // Two slots free: both to 1002 (0 then 1 running, fewer than 1001's 2).
  CHECK(Started(pending, r) == std::vector<int64_t>{3, 4});
  CHECK(Reason(pending, r, 1) == kReasonResources);
  CHECK(Reason(pending, r, 2) == kReasonPriority);
  CHECK(users.running[1002] == 2);
  // Without anything running, the user who submitted first starts first.
  AdmissionUsers fresh;
  r = Admit(pending, {}, {1, 3}, 100, &fresh);
  CHECK(Started(pending, r) == std::vector<int64_t>{1, 3, 2});
}

TEST_CASE("Admission: max_running_per_user holds a user's jobs with Slurm's reason") {
  std::vector<AdmissionJob> pending = {Job(1, 1001), Job(2, 1001), Job(3, 1001), Job(4, 1002)};
  AdmissionLimits limits{1, 4};
  limits.max_running_per_user = 1;
  AdmissionResult r = Admit(pending, {}, limits, 100);
  CHECK(Started(pending, r) == std::vector<int64_t>{1, 4});
  CHECK(Reason(pending, r, 2) == kReasonUserLimit);
  CHECK(Reason(pending, r, 3) == kReasonUserLimit);
  CHECK(std::string(kReasonUserLimit) == "QOSMaxJobsPerUserLimit");
  // Jobs already running count; a foreground `gshare run` is not bound (it counts, though).
  AdmissionUsers users;
  users.running[1002] = 1;
  AdmissionJob fg = Job(5, 1002);
  fg.foreground = true;
  pending = {Job(4, 1002), fg, Job(6, 1003)};
  r = Admit(pending, {{"0", 1}}, limits, 100, &users);
  CHECK(Started(pending, r) == std::vector<int64_t>{6, 5});  // 1003 runs fewer
  CHECK(Reason(pending, r, 4) == kReasonUserLimit);
  // 0: no limit.
  limits.max_running_per_user = 0;
  pending = {Job(1, 1001), Job(2, 1001), Job(3, 1001)};
  CHECK(Admit(pending, {}, limits, 100).start.size() == 3);
}

TEST_CASE("Admission: priority wins over fair share between users") {
  // 1001 runs two jobs and has a high-priority one; 1002 runs none.
  std::vector<AdmissionJob> pending = {Job(1, 1002), Job(2, 1001, 5), Job(3, 1002)};
  AdmissionUsers users;
  users.running[1001] = 2;
  AdmissionResult r = Admit(pending, {{"0", 2}}, {1, 3}, 100, &users);
  CHECK(Started(pending, r) == std::vector<int64_t>{2});
  CHECK(Reason(pending, r, 1) == kReasonResources);
  // The per-user limit holds at every priority.
  AdmissionLimits limits{1, 3};
  limits.max_running_per_user = 2;
  AdmissionUsers again;
  again.running[1001] = 2;
  r = Admit(pending, {{"0", 2}}, limits, 100, &again);
  CHECK(Started(pending, r) == std::vector<int64_t>{1});
  CHECK(Reason(pending, r, 2) == kReasonUserLimit);
}

}  // namespace
}  // namespace gshare::unit_admission_fair
