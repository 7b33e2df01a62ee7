// A resident's memory (Arbiter::SetResidents) is no victim of another job's room: the turn's
// holder makes room from the other jobs, and when they cannot give enough the plan says so
// instead of evicting the resident.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "policy/ledger_test_util.h"

namespace gshare::unit_ledger_resident {
namespace {

using namespace ledger_test;  // NOLINT: the shared constants of these tests

TEST_CASE("ledger: a resident's memory stays while another job's room is made") {
  std::set<JobId> residents{1};
  MemoryLedger::Options o = NoContext();
  o.resident = [&residents](const GpuKey&, JobId j) { return residents.count(j) != 0; };
  MemoryLedger ledger(o);
  ledger.Report(11, 1, kGpu, Report80(10, 10));  // the resident, run least recently
  ledger.Report(21, 2, kGpu, Report80(40, 40));
  ledger.Report(31, 3, kGpu, Report80(40, 5));  // 35 GiB swapped out: its turn comes
  ledger.Ran(1, kGpu, At(0));
  ledger.Ran(2, kGpu, At(10));
  // 10 + 40 + 40 = 90 GiB: job 3's turn needs 10 GiB, all from job 2.
  MemoryLedger::Plan plan = ledger.MakeRoom(kGpu, 3);
  CHECK(plan.feasible);
  CHECK(EvictedFrom(plan, 11) == 0);
  CHECK(EvictedFrom(plan, 21) == 10 * kGiB);
  // Job 2 cannot give it all (35 of its GiB are fixed): the plan is not feasible, and the
  // resident still gives nothing.
  proto::MemReportMsg fixed = Report80(40, 40);
  fixed.fixed = 35 * kGiB;
  ledger.Report(21, 2, kGpu, fixed);
  plan = ledger.MakeRoom(kGpu, 3);
  CHECK_FALSE(plan.feasible);
  CHECK(EvictedFrom(plan, 11) == 0);
  // No longer resident: least recently run, it goes first.
  residents.clear();
  plan = ledger.MakeRoom(kGpu, 3);
  CHECK(plan.feasible);
  CHECK(EvictedFrom(plan, 11) == 10 * kGiB);
}

TEST_CASE("ledger: a lower job's room leaves headroom beside a resident of higher priority") {
  std::set<JobId> residents{1};
  std::map<JobId, int> priority{{1, 10}, {2, 0}, {3, 0}};
  MemoryLedger::Options o = NoContext();
  o.resident = [&residents](const GpuKey&, JobId j) { return residents.count(j) != 0; };
  o.priority = [&priority](JobId j) { return priority[j]; };
  MemoryLedger ledger(o);
  ledger.Report(11, 1, kGpu, Report80(30, 30));  // the service, resident
  ledger.Report(21, 2, kGpu, Report80(30, 30));
  ledger.Report(31, 3, kGpu, Report80(30, 10));  // 20 GiB swapped out: its turn comes
  // 30 + 30 + 30 = 90 GiB: 10 GiB must leave for job 3, and 2 more so that the service's
  // driver allocations (streams, graphs) still find room.
  MemoryLedger::Plan plan = ledger.MakeRoom(kGpu, 3);
  CHECK(plan.feasible);
  CHECK(EvictedFrom(plan, 11) == 0);
  CHECK(EvictedFrom(plan, 21) == 10 * kGiB + MemoryLedger::kResidentHeadroom);
  // Of equal priority the resident keeps no headroom from job 3's room.
  priority[1] = 0;
  plan = ledger.MakeRoom(kGpu, 3);
  CHECK(EvictedFrom(plan, 21) == 10 * kGiB);
  // Nor for a job above it: the higher job's own room is its own.
  priority[1] = 10;
  priority[3] = 20;
  plan = ledger.MakeRoom(kGpu, 3);
  CHECK(EvictedFrom(plan, 21) == 10 * kGiB);
  // Not resident: no headroom (its memory may leave like any other's, priority permitting).
  priority[3] = 0;
  residents.clear();
  plan = ledger.MakeRoom(kGpu, 3);
  CHECK(EvictedFrom(plan, 11) + EvictedFrom(plan, 21) == 10 * kGiB);
}

}  // namespace
}  // namespace gshare::unit_ledger_resident
