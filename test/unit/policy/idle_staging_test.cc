// IdleStaging (docs/memory.md, "Idle memory is staged") and the ledger's staged bytes: who is
// asked to stage, how much, when not; staged memory leaves without new host memory.
#include "policy/idle_staging.h"

#include <doctest/doctest.h>

#include <map>

#include "ledger_test_util.h"

namespace gshare::unit_idle_staging {
namespace {

using namespace ledger_test;  // NOLINT: the shared constants of these tests

constexpr Millis kAfter{5000};

proto::MemReportMsg Rep(uint64_t allocated_gib, uint64_t resident_gib, uint64_t staged_gib = 0,
                        uint32_t engine = static_cast<uint32_t>(proto::MemoryEngine::kSwap)) {
  proto::MemReportMsg m{};
  m.total = 80 * kGiB;
  m.allocated = allocated_gib * kGiB;
  m.resident = resident_gib * kGiB;
  m.staged = staged_gib * kGiB;
  m.engine = engine;
  return m;
}

struct World {
  explicit World(uint64_t host_budget_gib = 0) : ledger(Budget(host_budget_gib)) {}
  static MemoryLedger::Options Budget(uint64_t gib) {
    MemoryLedger::Options o = NoContext();
    o.host_budget = gib * kGiB;
    return o;
  }
  MemoryLedger ledger;
  IdleStaging staging{kAfter};
  std::map<JobId, Millis> idle;  // jobs not listed are active
  bool contended = false;

  std::vector<IdleStaging::Request> Plan() {
    IdleStaging::GpuState s{ledger.Capacity(kGpu), ledger.Used(kGpu), contended,
                            ledger.ConnsOn(kGpu)};
    return staging.Plan(
        kGpu, s,
        [this](JobId j) -> std::optional<Millis> {
          auto it = idle.find(j);
          return it == idle.end() ? std::nullopt : std::optional<Millis>(it->second);
        },
        [this](JobId) { return ledger.HostLeftFor(0); });
  }
};

TEST_CASE("staging: an idle job holding half the GPU is staged once per idle period") {
  World w;
  w.ledger.Report(1, 1, kGpu, Rep(40, 40));
  w.idle[1] = Millis(4999);
  CHECK(w.Plan().empty());  // not idle long enough
  w.idle[1] = kAfter;
  auto plan = w.Plan();
  REQUIRE(plan.size() == 1);
  CHECK(plan[0].conn == 1);
  CHECK(plan[0].bytes == 40 * kGiB);
  CHECK(w.Plan().empty());  // asked already in this idle period
  w.staging.Active(1);      // it ran again: its copies are gone
  auto again = w.Plan();
  REQUIRE(again.size() == 1);
  CHECK(again[0].bytes == 40 * kGiB);
}

TEST_CASE("staging: nothing while the GPU has room and nobody else is there; then yes") {
  World w;
  w.ledger.Report(1, 1, kGpu, Rep(20, 20));  // a quarter of the GPU
  w.idle[1] = Millis(60000);
  CHECK(w.Plan().empty());
  w.contended = true;  // another job uses the GPU or waits for it
  REQUIRE(w.Plan().size() == 1);
}

TEST_CASE("staging: active, checkpoint-engine, small and staged jobs are not asked") {
  World w;
  w.ledger.Report(1, 1, kGpu, Rep(30, 30));  // active (not idle)
  w.ledger.Report(2, 2, kGpu,
                  Rep(10, 10, 0, static_cast<uint32_t>(proto::MemoryEngine::kCheckpoint)));
  w.ledger.Report(3, 3, kGpu, Rep(20, 20, 20));  // staged already
  proto::MemReportMsg tiny = Rep(0, 0);
  tiny.allocated = tiny.resident = 32ull << 20;
  w.ledger.Report(4, 4, kGpu, tiny);
  for (JobId j : {2, 3, 4}) w.idle[j] = Millis(60000);
  CHECK(w.Plan().empty());
  w.ledger.SetSuspended(5, true);
  w.ledger.Report(5, 5, kGpu, Rep(10, 10));
  w.idle[5] = Millis(60000);
  CHECK(w.Plan().empty());  // suspended: left alone
}

TEST_CASE("staging: longest idle first, within the host budget; the rest of a job counts") {
  World w(50);
  w.ledger.Report(1, 1, kGpu, Rep(30, 30, 10));  // 10 GiB staged already (counted)
  w.ledger.Report(2, 2, kGpu, Rep(30, 30));
  w.ledger.Report(3, 3, kGpu, Rep(20, 10));  // 10 GiB swapped out (counted)
  w.idle[1] = Millis(6000);
  w.idle[2] = Millis(9000);
  // Host left: 50 - 10 staged - 10 swapped = 30 GiB. Job 2 (idle longest) takes all 30.
  auto plan = w.Plan();
  REQUIRE(plan.size() == 1);
  CHECK(plan[0].conn == 2);
  CHECK(plan[0].bytes == 30 * kGiB);
}

TEST_CASE("staging: a request counts what is staged already; it never passes the budget") {
  World w(25);
  w.ledger.Report(1, 1, kGpu, Rep(40, 40, 10));
  w.idle[1] = Millis(6000);
  auto plan = w.Plan();
  REQUIRE(plan.size() == 1);
  CHECK(plan[0].bytes == 25 * kGiB);  // 10 staged + 15 more: the budget's 25 in all
}

TEST_CASE("staging: pinned pools count, even empty ones; a process stages into its own first") {
  World w(50);
  proto::MemReportMsg pooled = Rep(30, 30);  // evicted once and back: its 30 GiB pool stays
  pooled.host_bytes = 30 * kGiB;
  w.ledger.Report(1, 1, kGpu, pooled);
  w.ledger.Report(2, 2, kGpu, Rep(30, 10));  // 20 GiB swapped out
  w.ledger.Report(3, 3, kGpu, Rep(20, 20));  // no pool
  w.idle[1] = Millis(9000);
  w.idle[3] = Millis(8000);
  CHECK(w.ledger.HostLeftFor(0) == 0);  // 30 (pool) + 20 (swapped) pinned: the budget
  auto plan = w.Plan();
  REQUIRE(plan.size() == 1);
  CHECK(plan[0].conn == 1);  // into its own pool, pinning nothing more
  CHECK(plan[0].bytes == 30 * kGiB);
}

TEST_CASE("staging: a request under way holds its room until the pool has grown for it") {
  World w(50);
  w.ledger.Report(1, 1, kGpu, Rep(40, 40));
  w.idle[1] = Millis(9000);
  REQUIRE(w.Plan().size() == 1);  // 40 GiB asked; nothing reported pinned yet
  w.ledger.Report(2, 2, kGpu, Rep(30, 30));
  w.idle[2] = Millis(6000);
  auto plan = w.Plan();
  REQUIRE(plan.size() == 1);
  CHECK(plan[0].conn == 2);
  CHECK(plan[0].bytes == 10 * kGiB);  // 50 - the 40 under way
}

TEST_CASE("ledger: a holder pins ahead no more than the budget leaves beside others' pools") {
  MemoryLedger::Options o = NoContext();
  o.host_budget = 60 * kGiB;
  MemoryLedger ledger(o);
  proto::MemReportMsg idle = Rep(30, 0);  // swapped out: a 30 GiB pool
  idle.host_bytes = 30 * kGiB;
  ledger.Report(1, 1, kGpu, idle);
  proto::MemReportMsg other = Rep(20, 20);  // an empty 20 GiB pool left from earlier turns
  other.host_bytes = 20 * kGiB;
  ledger.Report(2, 2, kGpu, other);
  ledger.Report(3, 3, kGpu, Rep(70, 70));         // the holder: the GPU lacks 40 GiB
  CHECK(ledger.PoolToPin(3, kGpu) == 10 * kGiB);  // 60 - 30 - 20
}

TEST_CASE("staging: off when idle_stage_after is 0") {
  World w;
  w.staging = IdleStaging(Millis(0));
  w.ledger.Report(1, 1, kGpu, Rep(60, 60));
  w.idle[1] = Millis(3600000);
  CHECK(w.Plan().empty());
}

TEST_CASE("ledger: staged memory leaves first and takes no new host memory") {
  MemoryLedger::Options o = NoContext();
  o.host_budget = 30 * kGiB;
  MemoryLedger ledger(o);
  ledger.Report(1, 1, kGpu, Rep(40, 40, 30));  // idle, 30 GiB staged: the budget is full
  ledger.Report(2, 2, kGpu, Rep(50, 0));       // arrives: needs 50 GiB, 40 free
  CHECK(ledger.HostLeftFor(0) == 0);
  MemoryLedger::Plan plan = ledger.MakeRoom(kGpu, 2);
  CHECK(plan.feasible);  // 10 GiB, all staged: no new host memory
  CHECK(EvictedFrom(plan, 1) == 10 * kGiB);
  ledger.NoteEviction(1, kGpu, 10 * kGiB);
  CHECK(ledger.Totals(1).staged == 20 * kGiB);
  // 11 GiB more: all of it staged (20 GiB left staged), no new host memory.
  ledger.Report(2, 2, kGpu, Rep(61, 0));
  CHECK(ledger.MakeRoom(kGpu, 2).feasible);
  // 21 GiB more would need 1 GiB the budget does not have (10 swapped + 20 staged = 30).
  ledger.Report(2, 2, kGpu, Rep(71, 0));
  CHECK_FALSE(ledger.MakeRoom(kGpu, 2).feasible);
}

}  // namespace
}  // namespace gshare::unit_idle_staging
