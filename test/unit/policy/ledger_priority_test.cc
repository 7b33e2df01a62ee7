// Memory ledger and priorities: lower priorities are evicted first, and a job of higher
// priority gives a lower one only what it staged (memory idle long enough to be copied out);
// the plan that would need its memory in use is not feasible, reason HigherPriorityMemory.
#include <doctest/doctest.h>

#include <map>

#include "ledger_test_util.h"
#include "policy/memory_ledger.h"

namespace gshare::unit_ledger_priority {
namespace {

using namespace ledger_test;  // NOLINT: the shared constants of these tests

// A report on a 10 GiB GPU, sizes in GiB.
proto::MemReportMsg Rep(uint64_t allocated, uint64_t resident, uint64_t staged = 0) {
  proto::MemReportMsg m{};
  m.total = 10 * kGiB;
  m.allocated = allocated * kGiB;
  m.resident = resident * kGiB;
  m.staged = staged * kGiB;
  m.engine = static_cast<uint32_t>(proto::MemoryEngine::kSwap);
  return m;
}

struct Fixture {
  std::map<JobId, int> priority{{1, 10}, {2, 0}, {3, 0}};
  MemoryLedger ledger{[this] {
    MemoryLedger::Options o = NoContext();
    o.priority = [this](JobId j) { return priority.at(j); };
    return o;
  }()};
};

TEST_CASE_FIXTURE(Fixture, "ledger priority: lower jobs are evicted first, the higher one stays") {
  ledger.Report(11, 1, kGpu, Rep(4, 4));  // the service, idle between requests
  ledger.Report(31, 3, kGpu, Rep(4, 4));  // a training that ran more recently
  ledger.Report(21, 2, kGpu, Rep(5, 0));  // a training whose turn comes: 3 GiB too many
  ledger.Ran(1, kGpu, At(50));
  ledger.Ran(3, kGpu, At(100));
  MemoryLedger::Plan plan = ledger.MakeRoom(kGpu, 2);
  CHECK(plan.feasible);
  REQUIRE(plan.evictions.size() == 1);
  CHECK(plan.evictions[0].conn == 31);  // not the service, though it ran longest ago
  CHECK(plan.evictions[0].bytes == 3 * kGiB);
}

TEST_CASE_FIXTURE(Fixture,
                  "ledger priority: a lower job never takes a higher one's memory in use") {
  ledger.Report(11, 1, kGpu, Rep(4, 4));
  ledger.Report(31, 3, kGpu, Rep(4, 4));
  ledger.Report(21, 2, kGpu, Rep(7, 0));  // 5 GiB too many; job 3 has 4
  MemoryLedger::Plan plan = ledger.MakeRoom(kGpu, 2);
  CHECK_FALSE(plan.feasible);
  CHECK(plan.reason == "HigherPriorityMemory");
  CHECK(EvictedFrom(plan, 11) == 0);
  // With every lease given back (CanGrant's question) the answer is the same.
  CHECK(ledger.MakeRoom(kGpu, 2, 0, /*leases_released=*/true).reason == "HigherPriorityMemory");
  // A job of the same priority as the service gives it what it needs, as before.
  priority[2] = 10;
  plan = ledger.MakeRoom(kGpu, 2);
  CHECK(plan.feasible);
  CHECK(EvictedFrom(plan, 11) + EvictedFrom(plan, 31) == 5 * kGiB);
  // And the service, asking for room, takes it from the lower ones.
  priority[2] = 0;
  ledger.Report(11, 1, kGpu, Rep(6, 2));  // 4 of its 6 GiB swapped out
  ledger.Report(21, 2, kGpu, Rep(4, 4));
  ledger.Report(31, 3, kGpu, Rep(4, 2));  // 2 + 4 + 2 resident, 4 to come back: 2 too many
  plan = ledger.MakeRoom(kGpu, 1);
  CHECK(plan.feasible);
  CHECK(EvictedFrom(plan, 21) + EvictedFrom(plan, 31) == 2 * kGiB);
}

TEST_CASE_FIXTURE(Fixture,
                  "ledger priority: what the higher job staged is room a lower one may use") {
  ledger.Report(11, 1, kGpu, Rep(6, 6, 2));  // idle long enough: 2 of its 6 GiB copied out
  ledger.Report(21, 2, kGpu, Rep(6, 0));     // 2 GiB too many
  MemoryLedger::Plan plan = ledger.MakeRoom(kGpu, 2);
  CHECK(plan.feasible);
  CHECK(EvictedFrom(plan, 11) == 2 * kGiB);
  ledger.Report(21, 2, kGpu, Rep(7, 0));  // 3 GiB too many: 1 GiB more than it staged
  plan = ledger.MakeRoom(kGpu, 2);
  CHECK_FALSE(plan.feasible);
  CHECK(plan.reason == "HigherPriorityMemory");
  ledger.Report(11, 1, kGpu, Rep(6, 6, 6));  // all of it staged
  CHECK(ledger.MakeRoom(kGpu, 2).feasible);
}

TEST_CASE_FIXTURE(Fixture, "ledger priority: fixed memory still reads GpuMemory") {
  proto::MemReportMsg fixed = Rep(4, 4);
  fixed.fixed = 4 * kGiB;
  ledger.Report(11, 1, kGpu, fixed);      // a higher job whose memory cannot move at all
  ledger.Report(21, 2, kGpu, Rep(7, 0));  // 1 GiB too many
  MemoryLedger::Plan plan = ledger.MakeRoom(kGpu, 2);
  CHECK_FALSE(plan.feasible);
  CHECK(plan.reason == "GpuMemory");
}

}  // namespace
}  // namespace gshare::unit_ledger_priority
