#include "policy/admission.h"

#include <doctest/doctest.h>

#include "admission_test_util.h"

namespace gshare::unit_admission {
namespace {

using admission_test::Reason;
using admission_test::Started;

AdmissionJob Pending(int64_t id, int priority = 0, double submit = 0) {
  AdmissionJob j;
  j.id = id;
  j.priority = priority;
  j.submit_time = submit == 0 ? static_cast<double>(id) : submit;
  return j;
}

TEST_CASE("Admission starts by priority, then submission time, up to max_running") {
  std::vector<AdmissionJob> pending = {Pending(1, 0), Pending(2, 5), Pending(3, 0, 0.5),
                                       Pending(4, -1), Pending(5, 5)};
  AdmissionResult r = Admit(pending, {}, {1, 3}, 100);
  CHECK(Started(pending, r) == std::vector<int64_t>{2, 5, 3});  // 3 was submitted before 1
  CHECK(Reason(pending, r, 1) == kReasonResources);             // first one that waits for a slot
  CHECK(Reason(pending, r, 4) == kReasonPriority);              // behind it
  CHECK(Reason(pending, r, 2).empty());
}

TEST_CASE("Admission counts jobs already running per slot and spreads over GPUs") {
  std::vector<AdmissionJob> three = {Pending(1), Pending(2), Pending(3)};
  AdmissionResult r = Admit(three, {{"0", 2}}, {2, 2}, 0);
  REQUIRE(r.start.size() == 2);
  CHECK(r.start[0].slot == "1");
  CHECK(r.start[1].slot == "1");
  CHECK(Reason(three, r, 3) == kReasonResources);
  AdmissionJob pinned = Pending(4);
  pinned.gpu = "0";
  AdmissionJob other = Pending(5, 0, 10.0);  // submitted last
  other.gpu = "GPU-x";                       // a slot of its own
  // Every slot full for jobs without --gpu, yet one pinned to a free GPU still starts.
  std::vector<AdmissionJob> mixed = {pinned, Pending(6), Pending(7), other};
  r = Admit(mixed, {{"0", 2}, {"1", 1}}, {2, 2}, 0);
  CHECK(Started(mixed, r) == std::vector<int64_t>{6, 5});
  CHECK(Reason(mixed, r, 4) == kReasonResources);
  CHECK(Reason(mixed, r, 7) == kReasonPriority);
  using Slots = std::vector<std::string>;
  CHECK(ChooseSlots("", 1, {{"0", 1}, {"1", 1}}, 3) == Slots{"2"});
  CHECK(ChooseSlots("", 1, {}, 0) == Slots{"0"});
  CHECK(ChooseSlots("GPU-abc", 1, {}, 2) == Slots{"GPU-abc"});
}

TEST_CASE("Admission places a multi-GPU job on its least loaded GPUs, all with room") {
  using Slots = std::vector<std::string>;
  // Two of four, least loaded first, given in index order; ties go to the lower index.
  CHECK(ChooseSlots("", 2, {{"0", 2}, {"1", 0}, {"2", 1}, {"3", 0}}, 4) == Slots{"1", "3"});
  CHECK(ChooseSlots("", 3, {}, 4) == Slots{"0", "1", "2"});
  CHECK(ChooseSlots("", 5, {}, 2) == Slots{"0", "1"});  // never more than there are
  CHECK(ChooseSlots("2,0", 2, {}, 4) == Slots{"2", "0"});
  // As many jobs on each: the GPUs whose jobs hold the least memory.
  const std::map<std::string, uint64_t> bytes = {{"0", 40}, {"1", 10}, {"2", 30}};
  CHECK(ChooseSlots("", 1, {{"0", 1}, {"1", 1}, {"2", 1}}, 3, bytes) == Slots{"1"});
  CHECK(ChooseSlots("", 2, {{"0", 1}, {"1", 1}, {"2", 1}}, 3, bytes) == Slots{"1", "2"});
  CHECK(ChooseSlots("", 1, {{"0", 1}, {"1", 2}, {"2", 1}}, 3, bytes) == Slots{"2"});  // jobs first
  CHECK(JoinSlots({"1", "3"}) == "1,3");
  AdmissionJob pair = Pending(1);
  pair.gpus = 2;
  AdmissionJob single = Pending(2);
  // GPU 0 runs one job of max_running 2, GPU 1 two: the pair needs room on both and waits;
  // the single job behind it still starts on GPU 0.
  std::vector<AdmissionJob> jobs = {pair, single};
  AdmissionResult r = Admit(jobs, {{"0", 1}, {"1", 2}}, {2, 2}, 0);
  CHECK(Started(jobs, r) == std::vector<int64_t>{2});
  CHECK(Reason(jobs, r, 1) == kReasonResources);
  // With room on both, it starts and counts on both: a third job finds GPU 1 full.
  AdmissionJob third = Pending(3);
  jobs = {pair, third};
  r = Admit(jobs, {{"0", 1}, {"1", 1}}, {2, 2}, 0);
  REQUIRE(r.start.size() == 1);
  CHECK(r.start[0].slot == "0,1");
  CHECK(Reason(jobs, r, 3) == kReasonResources);
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
  std::vector<AdmissionJob> all = {held, later, never, waits, due, fg};
  AdmissionResult r = Admit(all, {{"0", 1}}, {1, 2}, 200);
  CHECK(Reason(all, r, 1) == kReasonHeld);
  CHECK(Reason(all, r, 2) == kReasonBeginTime);
  CHECK(Reason(all, r, 3) == kReasonDependencyNever);
  CHECK(Reason(all, r, 4) == kReasonDependency);
  CHECK(Started(all, r) ==
        std::vector<int64_t>{5, 6});  // 6 is past the limit but in the foreground
  REQUIRE(r.next_begin.has_value());
  CHECK(*r.next_begin == 300);
}

TEST_CASE("Admission starts no submitted job while the queue is paused, a foreground one still") {
  AdmissionJob held = Pending(1);
  held.held = true;
  AdmissionJob fg = Pending(3);
  fg.foreground = true;
  std::vector<AdmissionJob> all = {held, Pending(2, 9), fg};
  AdmissionLimits paused{1, 4};
  paused.paused = true;
  AdmissionResult r = Admit(all, {}, paused, 0);
  CHECK(Started(all, r) == std::vector<int64_t>{3});
  CHECK(Reason(all, r, 2) == kReasonPaused);
  CHECK(Reason(all, r, 1) == kReasonHeld);  // its own reason first
  paused.paused = false;
  r = Admit(all, {}, paused, 0);
  CHECK(Started(all, r) == std::vector<int64_t>{2, 3});
}

}  // namespace
}  // namespace gshare::unit_admission
