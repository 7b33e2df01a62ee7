// The per-user host budget of the memory ledger (issue 21, [memory] host_budget_per_user): no
// eviction passes its owner's budget; other users' jobs give the room instead, else the grant
// waits with reason UserHostMemoryBudget.
#include "policy/memory_ledger.h"

#include <doctest/doctest.h>

#include "ledger_test_util.h"

#include <map>

namespace gshare::unit_ledger_user_budget {
namespace {

using namespace ledger_test;  // NOLINT: the shared constants of these tests

proto::MemReportMsg Rep(uint64_t allocated, uint64_t resident) {
  proto::MemReportMsg m{};
  m.total = 10 * kGiB;
  m.allocated = allocated * kGiB;
  m.resident = resident * kGiB;
  m.engine = static_cast<uint32_t>(proto::MemoryEngine::kSwap);
  return m;
}

// Jobs 1 and 3 belong to uid 1001, job 2 to 1002, job 4 to 1003.
const std::map<JobId, uid_t> kOwners = {{1, 1001}, {2, 1002}, {3, 1001}, {4, 1003}};

MemoryLedger::Options Budget(uint64_t per_user) {
  MemoryLedger::Options o;
  o.context_bytes = 0;
  o.host_budget_per_user = per_user;
  o.owner = [](JobId j) { return kOwners.at(j); };
  return o;
}

TEST_CASE("ledger: an eviction never passes its owner's host budget; others give the rest") {
  MemoryLedger ledger(Budget(4 * kGiB));
  ledger.Report(31, 3, kOther, Rep(6, 3));  // 1001 has 3 GiB swapped out already (other GPU)
  ledger.Report(11, 1, kGpu, Rep(5, 5));    // 1001, run least recently
  ledger.Report(21, 2, kGpu, Rep(5, 5));    // 1002
  ledger.Report(41, 4, kGpu, Rep(4, 0));    // 1003 wants 4 back: 4 GiB too many
  ledger.Ran(1, kGpu, kT0);
  ledger.Ran(2, kGpu, kT0 + Millis(10));
  CHECK(ledger.SwappedBytesOf(1001) == 3 * kGiB);
  MemoryLedger::Plan plan = ledger.MakeRoom(kGpu, 4);
  CHECK(plan.feasible);
  CHECK(EvictedFrom(plan, 11) == 1 * kGiB);  // all that 1001's budget leaves (4 - 3)
  CHECK(EvictedFrom(plan, 21) == 3 * kGiB);  // the rest from the next victim
  CHECK(plan.bytes == 4 * kGiB);

  // Without the per-user budget, the least recently run job gives it all.
  MemoryLedger::Options unlimited = Budget(0);
  MemoryLedger free_ledger(unlimited);
  free_ledger.Report(31, 3, kOther, Rep(6, 3));
  free_ledger.Report(11, 1, kGpu, Rep(5, 5));
  free_ledger.Report(21, 2, kGpu, Rep(5, 5));
  free_ledger.Report(41, 4, kGpu, Rep(4, 0));
  free_ledger.Ran(1, kGpu, kT0);
  free_ledger.Ran(2, kGpu, kT0 + Millis(10));
  CHECK(EvictedFrom(free_ledger.MakeRoom(kGpu, 4), 11) == 4 * kGiB);
}

TEST_CASE("ledger: the grant waits with UserHostMemoryBudget when the budgets are full") {
  MemoryLedger ledger(Budget(2 * kGiB));
  ledger.Report(11, 1, kGpu, Rep(5, 5));  // 1001
  ledger.Report(21, 2, kGpu, Rep(5, 5));  // 1002
  ledger.Report(41, 4, kGpu, Rep(6, 0));  // needs 6: both together may give only 4
  MemoryLedger::Plan plan = ledger.MakeRoom(kGpu, 4);
  CHECK_FALSE(plan.feasible);
  CHECK(plan.reason == "UserHostMemoryBudget");
  // The job's own swapped data comes back, so it frees its owner's budget: job 3 of 1001
  // gets its 2 GiB back by evicting 2 of job 1 (1001), within 1001's 2 GiB.
  MemoryLedger own(Budget(2 * kGiB));
  own.Report(11, 1, kGpu, Rep(8, 8));
  own.Report(31, 3, kGpu, Rep(4, 2));
  plan = own.MakeRoom(kGpu, 3);
  CHECK(plan.feasible);
  CHECK(EvictedFrom(plan, 11) == 2 * kGiB);
  // Never pinned ahead for more than a user may swap out.
  CHECK(own.PoolToPin(1, kGpu) <= 2 * kGiB);
}

}  // namespace
}  // namespace gshare::unit_ledger_user_budget
