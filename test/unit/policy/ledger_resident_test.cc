// A resident's memory (Arbiter::SetResidents) is no victim of another job's room: the turn's
// holder makes room from the other jobs, and when they cannot give enough the plan says so
// instead of evicting the resident.
#include <doctest/doctest.h>

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

}  // namespace
}  // namespace gshare::unit_ledger_resident
