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

TEST_CASE("ledger: a user's shared host pool counts once, its free part for each process") {
  MemoryLedger::Options o = Budget(40 * kGiB);
  o.host_budget = 100 * kGiB;
  MemoryLedger ledger(o);
  // Jobs 1 and 3 (uid 1001) share a pool of 30 GiB populated: 8 and 6 GiB of it are theirs.
  auto shared = [](uint64_t allocated, uint64_t resident, uint64_t own) {
    proto::MemReportMsg m = Rep(allocated, resident);
    m.host_bytes = own * kGiB;
    m.shared_pool = 30 * kGiB;
    return m;
  };
  ledger.Report(11, 1, kGpu, shared(10, 2, 8));
  ledger.Report(31, 3, kOther, shared(10, 4, 6));
  // Job 2 (uid 1002) has a pool of its own: 12 GiB pinned, 5 swapped.
  proto::MemReportMsg own = Rep(10, 5);
  own.host_bytes = 12 * kGiB;
  ledger.Report(21, 2, kGpu, own);
  CHECK(ledger.SharedPoolFree(1001) == 16 * kGiB);  // 30 - 8 - 6
  CHECK(ledger.SharedPoolFree(1002) == 0);
  // 1001's budget: the pool once (30), not 30 per process; the machine's: 30 + 12.
  CHECK(ledger.HostLeftFor(1001) == 10 * kGiB);
  CHECK(ledger.HostLeftFor(1002) == 28 * kGiB);  // its own 40 - 12
  // Each of 1001's processes can evict into the pool's free part without growing it.
  CHECK(ledger.PoolFree(11) == 16 * kGiB);
  CHECK(ledger.PoolFree(21) == 7 * kGiB);
}

}  // namespace
}  // namespace gshare::unit_ledger_user_budget
