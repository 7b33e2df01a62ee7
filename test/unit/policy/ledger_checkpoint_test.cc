// MemoryLedger with the checkpoint engine and suspended jobs: a checkpoint-engine process is
// evicted whole (context included) and only while it holds no lease; a checkpointed process
// occupies nothing on the GPU and brings its context back when restored; a suspended job is
// left out of the fit.
#include <doctest/doctest.h>

#include "ledger_test_util.h"

#include "policy/memory_ledger.h"

namespace gshare::unit_ledger_checkpoint {
namespace {

using namespace ledger_test;  // NOLINT: the shared constants of these tests

proto::MemReportMsg Rep(uint64_t allocated, uint64_t resident,
                        proto::MemoryEngine engine = proto::MemoryEngine::kCheckpoint) {
  proto::MemReportMsg m{};
  m.total = 10 * kGiB;
  m.allocated = allocated * kGiB;
  m.resident = resident * kGiB;
  m.engine = static_cast<uint32_t>(engine);
  return m;
}

TEST_CASE("ledger checkpoint: a victim goes whole, context included, and never while holding") {
  MemoryLedger::Options o;
  o.context_bytes = kGiB;
  bool holding = true;
  o.holds_lease = [&holding](ConnId c) { return c == 11 && holding; };
  MemoryLedger ledger(o);
  ledger.Report(11, 1, kGpu, Rep(5, 5));  // 5 + 1 of context
  ledger.Report(21, 2, kGpu, Rep(4, 0));  // checkpointed job 2 wants to come back
  ledger.SetCheckpointed(21, true);
  CHECK_FALSE(ledger.Fits(kGpu));  // 5 + 4 + 2 contexts > 10

  // Job 1 holds the lease: it cannot be checkpointed now...
  MemoryLedger::Plan plan = ledger.MakeRoom(kGpu, 2);
  CHECK_FALSE(plan.feasible);
  CHECK(plan.reason == "GpuMemory");
  // ...but once it has given the lease back it can (what the grant filter asks).
  plan = ledger.MakeRoom(kGpu, 2, 0, /*leases_released=*/true);
  REQUIRE(plan.feasible);
  REQUIRE(plan.evictions.size() == 1);
  CHECK(plan.evictions[0].conn == 11);
  CHECK(plan.evictions[0].checkpoint);
  CHECK(plan.evictions[0].bytes == 6 * kGiB);  // all of it, though 1 GiB would have done

  holding = false;
  ledger.SetCheckpointed(11, true);
  ledger.SetCheckpointed(21, false);  // job 2 restored: now job 1 occupies nothing
  ledger.Report(21, 2, kGpu, Rep(4, 4));
  CHECK(ledger.Totals(1).resident == 0);
  CHECK(ledger.Totals(1).checkpointed);
  CHECK(ledger.FixedOfOthers(kGpu, 2) == 0);  // not even a context
  CHECK(ledger.MakeRoom(kGpu, 2).evictions.empty());
  // Job 1 coming back needs its 5 and its context: job 2 goes whole.
  plan = ledger.MakeRoom(kGpu, 1);
  REQUIRE(plan.evictions.size() == 1);
  CHECK(plan.evictions[0].conn == 21);
  CHECK(plan.bytes == 5 * kGiB);
}

TEST_CASE(
    "ledger checkpoint: swap-engine victims give only what is needed, beside checkpoint ones") {
  MemoryLedger::Options o;
  o.context_bytes = 0;
  MemoryLedger ledger(o);
  ledger.Report(11, 1, kGpu, Rep(3, 3, proto::MemoryEngine::kSwap));
  ledger.Report(21, 2, kGpu, Rep(4, 4, proto::MemoryEngine::kSwap));
  ledger.Report(31, 3, kGpu, Rep(6, 0));
  ledger.SetCheckpointed(31, true);
  ledger.Ran(1, kGpu, TimePoint{} + std::chrono::seconds(1));
  ledger.Ran(2, kGpu, TimePoint{} + std::chrono::seconds(2));
  MemoryLedger::Plan plan = ledger.MakeRoom(kGpu, 3);  // 3 + 4 + 6 = 13: 3 must go
  REQUIRE(plan.evictions.size() == 1);
  CHECK(plan.evictions[0].conn == 11);  // least recently run
  CHECK_FALSE(plan.evictions[0].checkpoint);
  CHECK(plan.evictions[0].bytes == 3 * kGiB);
}

TEST_CASE("ledger checkpoint: a suspended job is out of the fit and no victim") {
  MemoryLedger::Options o;
  o.context_bytes = 0;
  MemoryLedger ledger(o);
  ledger.Report(11, 1, kGpu, Rep(6, 6, proto::MemoryEngine::kSwap));
  ledger.Report(21, 2, kGpu, Rep(6, 6, proto::MemoryEngine::kSwap));
  CHECK_FALSE(ledger.Fits(kGpu));
  ledger.SetSuspended(2, true);
  CHECK(ledger.Fits(kGpu));
  CHECK(ledger.Overflow(kGpu) == 0);
  ledger.Report(31, 3, kGpu, Rep(0, 0, proto::MemoryEngine::kSwap));
  // Job 3 wants 4 more: job 2 is stopped and cannot move anything; job 1 can.
  proto::MemReportMsg demand = Rep(0, 0, proto::MemoryEngine::kSwap);
  demand.demand = 4 * kGiB;
  ledger.Report(31, 3, kGpu, demand);
  // The suspended job ran least recently: the first victim but for its being stopped.
  ledger.Ran(2, kGpu, TimePoint{} + std::chrono::seconds(1));
  ledger.Ran(1, kGpu, TimePoint{} + std::chrono::seconds(2));
  MemoryLedger::Plan plan = ledger.MakeRoom(kGpu, 3);
  REQUIRE(plan.evictions.size() == 1);
  CHECK(plan.evictions[0].conn == 11);
  // 6 + 6 on a 10 GiB GPU and 4 more wanted: 6 must go, all of job 1 (job 2 cannot move).
  CHECK(plan.bytes == 6 * kGiB);
  ledger.SetSuspended(2, false);
  CHECK_FALSE(ledger.Fits(kGpu));
}

}  // namespace
}  // namespace gshare::unit_ledger_checkpoint

namespace gshare::unit_ledger_checkpoint {
namespace {

TEST_CASE("ledger checkpoint: without checkpoints the engine's memory is fixed") {
  MemoryLedger::Options o;
  o.context_bytes = 0;
  MemoryLedger ledger(o);
  proto::MemReportMsg a{};
  a.total = 10ull << 30;
  a.allocated = a.resident = 6ull << 30;
  a.engine = static_cast<uint32_t>(proto::MemoryEngine::kCheckpoint);
  proto::MemReportMsg b = a;
  b.resident = 0;
  ledger.Report(11, 1, "GPU-0", a);
  ledger.Report(21, 2, "GPU-0", b);
  CHECK(ledger.MakeRoom("GPU-0", 2).feasible);  // job 1 would be checkpointed
  CHECK(ledger.FixedOfOthers("GPU-0", 2) == 0);
  ledger.SetCheckpointAvailable(false);
  MemoryLedger::Plan plan = ledger.MakeRoom("GPU-0", 2);
  CHECK_FALSE(plan.feasible);
  CHECK(plan.reason == "GpuMemory");
  CHECK(plan.evictions.empty());
  CHECK(ledger.FixedOfOthers("GPU-0", 2) == 6ull << 30);
}

TEST_CASE("ledger checkpoint: a moved process counts on its new GPU only") {
  MemoryLedger ledger(MemoryLedger::Options{});
  ledger.Report(11, 1, kGpu, Rep(6, 0));
  ledger.SetCheckpointed(11, true);
  ledger.Ran(1, kGpu, At(0));
  ledger.MoveConn(11, kGpu, kOther);
  CHECK(ledger.GpusOf(11) == std::vector<GpuKey>{kOther});
  CHECK(ledger.Totals(1, kGpu).allocated == 0);
  CHECK(ledger.Totals(1, kOther).allocated == 6 * kGiB);
  CHECK(ledger.Capacity(kOther) == ledger.Capacity(kGpu));  // same kind until it reports
  CHECK(ledger.Capacity(kOther) == 10 * kGiB);
  ledger.MoveConn(11, kGpu, kOther);  // nothing left on kGpu: no change
  CHECK(ledger.Totals(1, kOther).allocated == 6 * kGiB);
}

}  // namespace
}  // namespace gshare::unit_ledger_checkpoint
