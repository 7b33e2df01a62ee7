#include "admission.h"

#include <doctest/doctest.h>

namespace gshare {
namespace {

AdmissionJob Pending(int64_t id, int priority = 0, double submit = 0) {
  AdmissionJob j;
  j.id = id;
  j.priority = priority;
  j.submit_time = submit == 0 ? static_cast<double>(id) : submit;
  return j;
}

std::vector<int64_t> Started(const AdmissionResult& r) {
  std::vector<int64_t> ids;
  for (const auto& s : r.start) ids.push_back(s.id);
  return ids;
}

TEST_CASE("Admission starts by priority, then submission time, up to max_running") {
  std::vector<AdmissionJob> pending = {Pending(1, 0), Pending(2, 5), Pending(3, 0, 0.5),
                                       Pending(4, -1), Pending(5, 5)};
  AdmissionResult r = Admit(pending, {}, {1, 3}, 100);
  CHECK(Started(r) == std::vector<int64_t>{2, 5, 3});  // 3 was submitted before 1
  CHECK(r.reasons.at(1) == kReasonResources);           // first one that waits for a slot
  CHECK(r.reasons.at(4) == kReasonPriority);            // behind it
  CHECK(r.reasons.count(2) == 0);
}

TEST_CASE("Admission counts jobs already running per slot and spreads over GPUs") {
  AdmissionResult r = Admit({Pending(1), Pending(2), Pending(3)}, {{"0", 2}}, {2, 2}, 0);
  REQUIRE(r.start.size() == 2);
  CHECK(r.start[0].slot == "1");
  CHECK(r.start[1].slot == "1");
  CHECK(r.reasons.at(3) == kReasonResources);
  AdmissionJob pinned = Pending(4);
  pinned.gpu = "0";
  r = Admit({pinned}, {{"0", 2}}, {2, 2}, 0);
  CHECK(r.start.empty());
  CHECK(r.reasons.at(4) == kReasonResources);
  CHECK(ChooseSlot("", {{"0", 1}, {"1", 1}}, 3) == "2");
  CHECK(ChooseSlot("", {}, 0) == "0");
  CHECK(ChooseSlot("GPU-abc", {}, 2) == "GPU-abc");
}

TEST_CASE("Admission reasons follow Slurm's precedence and foreground jobs skip the limit") {
  AdmissionJob held = Pending(1);
  held.held = true;
  held.begin_time = 500;  // held wins over BeginTime
  AdmissionJob later = Pending(2);
  later.begin_time = 300;
  AdmissionJob never = Pending(3);
  never.dependencies = DependencyState::kNever;
  AdmissionJob waits = Pending(4);
  waits.dependencies = DependencyState::kWaiting;
  AdmissionJob due = Pending(5);
  due.begin_time = 100;  // its time has come
  AdmissionJob fg = Pending(6, -5);
  fg.foreground = true;
  AdmissionResult r = Admit({held, later, never, waits, due, fg}, {{"0", 1}}, {1, 2}, 200);
  CHECK(r.reasons.at(1) == kReasonHeld);
  CHECK(r.reasons.at(2) == kReasonBeginTime);
  CHECK(r.reasons.at(3) == kReasonDependencyNever);
  CHECK(r.reasons.at(4) == kReasonDependency);
  CHECK(Started(r) == std::vector<int64_t>{5, 6});  // 6 is past the limit but in the foreground
  REQUIRE(r.next_begin.has_value());
  CHECK(*r.next_begin == 300);
}

}  // namespace
}  // namespace gshare
