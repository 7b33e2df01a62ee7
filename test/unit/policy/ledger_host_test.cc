// Memory ledger, its host side (memory_ledger_host.cc): an eviction plan that would pass the
// host budget is infeasible, address space never backed holds no host memory, and the host
// pool each swap-engine process pins ahead and has free.
#include <doctest/doctest.h>

#include "ledger_test_util.h"
#include "policy/memory_ledger.h"

namespace gshare::unit_ledger_host {
namespace {

using namespace ledger_test;  // NOLINT: the shared constants of these tests

// A swap-engine process's report, in GiB.
proto::MemReportMsg SwapRep(uint64_t total, uint64_t allocated, uint64_t resident,
                            uint64_t demand = 0) {
  proto::MemReportMsg m = Rep(total, allocated, resident, 0, demand);
  m.engine = static_cast<uint32_t>(proto::MemoryEngine::kSwap);
  return m;
}

TEST_CASE("ledger: infeasible for HostMemoryBudget when swapped data would pass it") {
  MemoryLedger::Options o = NoContext();
  o.host_budget = 8 * kGiB;
  MemoryLedger ledger(o);
  ledger.Report(11, 1, kGpu, Rep(10, 6, 6));
  ledger.Report(21, 2, kGpu, Rep(10, 6, 0));  // 6 swapped; granting job 2 swaps 2 more
  CHECK(ledger.SwappedBytes() == 6 * kGiB);
  MemoryLedger::Plan plan = ledger.MakeRoom(kGpu, 2);
  CHECK(plan.feasible);  // job 2's own 6 come back with it: 6 - 6 + 2 = 2
  CHECK(plan.bytes == 2 * kGiB);

  ledger.Report(31, 3, kOther, Rep(10, 9, 2));  // 7 more swapped, on another GPU
  CHECK(ledger.SwappedBytes() == 13 * kGiB);
  plan = ledger.MakeRoom(kGpu, 2);  // 13 - 6 + 2 = 9 > 8
  CHECK_FALSE(plan.feasible);
  CHECK(plan.reason == "HostMemoryBudget");

  // 0: no budget.
  MemoryLedger unlimited(NoContext());
  unlimited.Report(11, 1, kGpu, Rep(10, 6, 6));
  unlimited.Report(21, 2, kGpu, Rep(10, 6, 0));
  unlimited.Report(31, 3, kOther, Rep(10, 300, 0));
  CHECK(unlimited.MakeRoom(kGpu, 2).feasible);
}

TEST_CASE("ledger: address space never backed holds no host memory") {
  MemoryLedger::Options o = NoContext();
  o.host_budget = 8 * kGiB;
  MemoryLedger ledger(o);
  ledger.Report(11, 1, kGpu, Rep(10, 6, 6));
  // Job 2 allocated 6 GiB while job 1 ran: reserved, never backed (fresh), nothing on the host.
  proto::MemReportMsg fresh = Rep(10, 6, 0);
  fresh.fresh = 6 * kGiB;
  ledger.Report(21, 2, kGpu, fresh);
  CHECK(ledger.SwappedBytes() == 0);
  CHECK(ledger.Totals(2, kGpu).swapped == 0);
  // Its turn still needs room for all 6 GiB on the GPU: 2 of job 1's.
  MemoryLedger::Plan plan = ledger.MakeRoom(kGpu, 2);
  CHECK(plan.feasible);
  CHECK(plan.bytes == 2 * kGiB);
  // With 7 GiB of another job's data on the host, the 2 GiB job 1 would give pass the budget
  // of 8; with 5 they fit. Job 2's fresh bytes count on neither side.
  ledger.Report(31, 3, kOther, Rep(10, 8, 1));
  CHECK(ledger.SwappedBytes() == 7 * kGiB);
  plan = ledger.MakeRoom(kGpu, 2);
  CHECK_FALSE(plan.feasible);
  CHECK(plan.reason == "HostMemoryBudget");
  ledger.Report(31, 3, kOther, Rep(10, 6, 1));  // 5 on the host: 5 + 2 = 7 fits
  CHECK(ledger.MakeRoom(kGpu, 2).feasible);
  // Job 1's pool: what it pinned, less its swapped-out bytes (none fresh there).
  proto::MemReportMsg pooled = Rep(10, 6, 4);
  pooled.host_bytes = 3 * kGiB;
  ledger.Report(11, 1, kGpu, pooled);
  CHECK(ledger.PoolFree(11) == 1 * kGiB);
}

TEST_CASE("ledger: the settled holder pins ahead the overflow plus a margin") {
  MemoryLedger ledger(NoContext());
  // Two 50 GiB jobs on an 80 GiB GPU: 20 GiB over. Job 2 holds; an allocation of it waits.
  ledger.Report(11, 1, kGpu, SwapRep(80, 50, 50));
  ledger.Report(21, 2, kGpu, SwapRep(80, 30, 30, /*demand=*/20));
  CHECK(ledger.PoolToPin(2, kGpu) == 0);  // it waits for room
  // Job 1 is evicted; job 2's allocation is served (no demand) but the GPU has not settled.
  ledger.NoteEviction(11, kGpu, 20 * kGiB);
  ledger.Report(21, 2, kGpu, SwapRep(80, 50, 50));
  CHECK(ledger.PoolToPin(2, kGpu) == 0);
  // Job 1 reports the eviction done: the holder pins what the GPU lacks + the margin, for
  // its own eviction at the end of its turn.
  ledger.Report(11, 1, kGpu, SwapRep(80, 50, 30));
  CHECK(ledger.PoolToPin(2, kGpu) == 20 * kGiB + MemoryLedger::kPinMargin);
  // The jobs grow: so does what the holder pins.
  ledger.Report(21, 2, kGpu, SwapRep(80, 55, 55));
  CHECK(ledger.PoolToPin(2, kGpu) == 25 * kGiB + MemoryLedger::kPinMargin);
  // Never more than a job could ever move.
  ledger.Report(31, 3, kOther, SwapRep(80, 1, 1));
  CHECK(ledger.PoolToPin(3, kOther) == 1 * kGiB);
  // Other engines pin nothing.
  ledger.Report(41, 4, kOther, Rep(80, 70, 70));
  CHECK(ledger.PoolToPin(4, kOther) == 0);
  // The host budget caps it.
  MemoryLedger::Options o = NoContext();
  o.host_budget = 8 * kGiB;
  MemoryLedger budgeted(o);
  budgeted.Report(11, 1, kGpu, SwapRep(80, 50, 50));
  budgeted.Report(21, 2, kGpu, SwapRep(80, 50, 50));
  CHECK(budgeted.PoolToPin(1, kGpu) == 8 * kGiB);
  // Other processes' pinned memory counts: job 2's 20 GiB swapped out fill it.
  budgeted.Report(21, 2, kGpu, SwapRep(80, 50, 30));
  CHECK(budgeted.PoolToPin(1, kGpu) == 0);
}

TEST_CASE("ledger: pool free is the pinned pool less the process's swapped-out bytes") {
  MemoryLedger ledger(NoContext());
  CHECK(ledger.PoolFree(11) == 0);              // nothing reported
  proto::MemReportMsg a = SwapRep(80, 50, 30);  // 20 GiB swapped out
  a.host_bytes = 32 * kGiB;
  ledger.Report(11, 1, kGpu, a);
  CHECK(ledger.PoolFree(11) == 12 * kGiB);
  // The same pool serves the process's other GPU: its swapped bytes count too.
  proto::MemReportMsg b = SwapRep(80, 20, 0);
  b.host_bytes = 32 * kGiB;
  ledger.Report(11, 1, kOther, b);
  CHECK(ledger.PoolFree(11) == 0);
}

}  // namespace
}  // namespace gshare::unit_ledger_host
