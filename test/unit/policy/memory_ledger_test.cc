// Memory ledger: capacity, whether jobs fit together, and the eviction plan before an
// exclusive grant (only what is needed, least recently run first, never fixed memory). The
// host side (the host budget, the pool pinned ahead) is ledger_host_test.cc's.
#include "policy/memory_ledger.h"

#include <doctest/doctest.h>

#include <map>

#include "ledger_test_util.h"

namespace gshare::unit_memory_ledger {
namespace {

using namespace ledger_test;  // NOLINT: the shared constants of these tests

TEST_CASE("ledger: capacity is the reported size, or gpu_limit when smaller") {
  MemoryLedger none(NoContext());
  CHECK(none.Capacity(kGpu) == 0);  // nothing reported
  none.Report(11, 1, kGpu, Rep(80, 1, 1));
  CHECK(none.Capacity(kGpu) == 80 * kGiB);
  CHECK(none.Capacity(kOther) == 0);
  // A later report without the size (engine off) keeps what is known.
  none.Report(21, 2, kGpu, Rep(0, 1, 1));
  CHECK(none.Capacity(kGpu) == 80 * kGiB);

  MemoryLedger::Options o = NoContext();
  o.gpu_limit = 40 * kGiB;
  MemoryLedger limited(o);
  limited.Report(11, 1, kGpu, Rep(80, 1, 1));
  CHECK(limited.Capacity(kGpu) == 40 * kGiB);

  o.gpu_limit = 100 * kGiB;  // larger than the GPU: the GPU's size
  MemoryLedger large(o);
  large.Report(11, 1, kGpu, Rep(80, 1, 1));
  CHECK(large.Capacity(kGpu) == 80 * kGiB);
}

TEST_CASE("ledger: fits counts allocations, demand and a context per process") {
  MemoryLedger::Options o;
  o.context_bytes = 1 * kGiB;
  MemoryLedger ledger(o);
  ledger.Report(11, 1, kGpu, Rep(10, 4, 4));
  ledger.Report(12, 1, kGpu, Rep(10, 3, 0));  // second process of job 1, swapped out
  // 4 + 3 + two contexts = 9 of 10: allocated counts even when not resident.
  CHECK(ledger.Fits(kGpu));
  CHECK(ledger.Overflow(kGpu) == 0);

  ledger.Report(21, 2, kGpu, Rep(10, 0, 0));  // a third process, only its context: 10
  CHECK(ledger.Fits(kGpu));
  CHECK(ledger.Overflow(kGpu) == 0);

  ledger.Report(21, 2, kGpu, Rep(10, 1, 1));
  CHECK_FALSE(ledger.Fits(kGpu));
  CHECK(ledger.Overflow(kGpu) == 1 * kGiB);

  ledger.Report(21, 2, kGpu, Rep(10, 0, 0, 0, 2));  // an allocation waits for 2 GiB
  CHECK_FALSE(ledger.Fits(kGpu));
  CHECK(ledger.Overflow(kGpu) == 2 * kGiB);

  // Memory on another GPU does not count here.
  ledger.Report(21, 2, kGpu, Rep(10, 0, 0));
  ledger.Report(31, 3, kOther, Rep(10, 9, 9));
  CHECK(ledger.Fits(kGpu));
  CHECK(ledger.Overflow(kOther) == 0);
  ledger.Report(32, 3, kOther, Rep(10, 1, 1));  // 9 + 1 + two contexts = 12 of 10
  CHECK(ledger.Overflow(kOther) == 2 * kGiB);
}

TEST_CASE("with no known size nothing is read as fitting") {
  MemoryLedger ledger(NoContext());
  CHECK_FALSE(ledger.Fits(kGpu));
  CHECK_FALSE(ledger.Reported(kGpu, 1));
  ledger.Report(11, 1, kGpu, Rep(0, 500, 500));
  CHECK(ledger.Capacity(kGpu) == 0);
  CHECK_FALSE(ledger.Fits(kGpu));
  CHECK(ledger.Reported(kGpu, 1));
  CHECK_FALSE(ledger.Reported(kGpu, 2));
  CHECK_FALSE(ledger.Reported(kOther, 1));
  CHECK(ledger.Overflow(kGpu) == 0);
  MemoryLedger::Plan plan = ledger.MakeRoom(kGpu, 2);
  CHECK(plan.feasible);
  CHECK(plan.evictions.empty());
}

TEST_CASE("ledger: nothing to evict when the new holder fits") {
  MemoryLedger ledger(NoContext());
  ledger.Report(11, 1, kGpu, Rep(10, 4, 4));
  ledger.Report(21, 2, kGpu, Rep(10, 3, 0));  // 4 resident + 3 to come back = 7 of 10
  MemoryLedger::Plan plan = ledger.MakeRoom(kGpu, 2);
  CHECK(plan.feasible);
  CHECK(plan.reason.empty());
  CHECK(plan.evictions.empty());
  CHECK(plan.bytes == 0);
  // Exactly full still needs nothing.
  plan = ledger.MakeRoom(kGpu, 2, 3 * kGiB);
  CHECK(plan.feasible);
  CHECK(plan.evictions.empty());
}

TEST_CASE("ledger: evicts only as much as the new holder needs") {
  MemoryLedger ledger(NoContext());
  ledger.Report(11, 1, kGpu, Rep(10, 6, 6));
  ledger.Report(21, 2, kGpu, Rep(10, 6, 0));  // 6 resident + 6 to come back: 2 too many
  MemoryLedger::Plan plan = ledger.MakeRoom(kGpu, 2);
  CHECK(plan.feasible);
  REQUIRE(plan.evictions.size() == 1);
  CHECK(plan.evictions[0].conn == 11);
  CHECK(plan.evictions[0].bytes == 2 * kGiB);
  CHECK(plan.bytes == 2 * kGiB);

  // An allocation that waits for room adds to it.
  plan = ledger.MakeRoom(kGpu, 2, 1 * kGiB);
  CHECK(plan.feasible);
  CHECK(EvictedFrom(plan, 11) == 3 * kGiB);
  CHECK(plan.bytes == 3 * kGiB);
}

TEST_CASE("ledger: a job's first exclusive turn makes room for its growth too") {
  MemoryLedger ledger(NoContext());
  // Two 40 GiB jobs on an 80 GiB GPU: they fit exactly; job 1's first turn.
  ledger.Report(11, 1, kGpu, Rep(80, 40, 40));
  ledger.Report(21, 2, kGpu, Rep(80, 40, 40));
  CHECK(ledger.MakeRoom(kGpu, 1).bytes == 0);
  MemoryLedger::Plan plan = ledger.GrantPlan(kGpu, 1);
  CHECK(plan.feasible);
  CHECK(EvictedFrom(plan, 21) == 10 * kGiB);  // a quarter of job 1's 40 GiB
  CHECK(EvictedFrom(plan, 11) == 0);
  // Later turns take only what the job needs.
  ledger.Ran(1, kGpu, At(0));
  CHECK(ledger.GrantPlan(kGpu, 1).bytes == 0);
  // The headroom is at least kGrowthHeadroom.
  CHECK(MemoryLedger::FirstTurnHeadroom(4 * kGiB) == MemoryLedger::kGrowthHeadroom);
  CHECK(MemoryLedger::FirstTurnHeadroom(40 * kGiB) == 10 * kGiB);
  // Where the others cannot give it, the plan is what the job needs: job 2's first turn,
  // job 1 can move 5 GiB only.
  ledger.Report(11, 1, kGpu, Rep(80, 40, 40, /*fixed=*/35));
  plan = ledger.GrantPlan(kGpu, 2);
  CHECK(plan.feasible);
  CHECK(plan.bytes == 0);
  ledger.Report(21, 2, kGpu, Rep(80, 44, 40));  // 4 GiB to come back: 4 too many
  plan = ledger.GrantPlan(kGpu, 2);
  CHECK(plan.feasible);
  CHECK(EvictedFrom(plan, 11) == 4 * kGiB);
}

TEST_CASE("ledger: contexts count as used memory when making room") {
  MemoryLedger::Options o;
  o.context_bytes = 1 * kGiB;
  MemoryLedger ledger(o);
  ledger.Report(11, 1, kGpu, Rep(10, 5, 5));
  ledger.Report(21, 2, kGpu, Rep(10, 2, 0));  // 5 + 2 + two contexts = 9 of 10
  CHECK(ledger.MakeRoom(kGpu, 2).evictions.empty());
  ledger.Report(21, 2, kGpu, Rep(10, 4, 0));  // 5 + 4 + 2 = 11 of 10
  MemoryLedger::Plan plan = ledger.MakeRoom(kGpu, 2);
  CHECK(plan.feasible);
  CHECK(EvictedFrom(plan, 11) == 1 * kGiB);
  CHECK(plan.bytes == 1 * kGiB);
}

TEST_CASE("ledger: least recently run jobs are evicted first, never the new holder") {
  MemoryLedger ledger(NoContext());
  ledger.Report(11, 1, kGpu, Rep(10, 4, 4));
  ledger.Report(31, 3, kGpu, Rep(10, 4, 4));
  ledger.Report(21, 2, kGpu, Rep(10, 5, 0));  // 8 resident + 5 to come back: 3 too many
  ledger.Ran(1, kGpu, At(100));
  ledger.Ran(3, kGpu, At(50));
  MemoryLedger::Plan plan = ledger.MakeRoom(kGpu, 2);
  CHECK(plan.feasible);
  REQUIRE(plan.evictions.size() == 1);
  CHECK(plan.evictions[0].conn == 31);
  CHECK(plan.evictions[0].bytes == 3 * kGiB);

  ledger.Ran(3, kGpu, At(200));  // now job 1 ran longest ago
  plan = ledger.MakeRoom(kGpu, 2);
  REQUIRE(plan.evictions.size() == 1);
  CHECK(plan.evictions[0].conn == 11);
  CHECK(plan.evictions[0].bytes == 3 * kGiB);

  // Runs on another GPU do not count here.
  ledger.Ran(1, kOther, At(300));
  plan = ledger.MakeRoom(kGpu, 2);
  REQUIRE(plan.evictions.size() == 1);
  CHECK(plan.evictions[0].conn == 11);
}

TEST_CASE("ledger: takes from the next victim when the first is not enough") {
  MemoryLedger ledger(NoContext());
  ledger.Report(11, 1, kGpu, Rep(10, 4, 4));
  ledger.Report(31, 3, kGpu, Rep(10, 2, 2));
  ledger.Report(21, 2, kGpu, Rep(10, 5, 0));
  ledger.Report(22, 2, kGpu, Rep(10, 2, 2));  // the new holder's other process stays
  ledger.Ran(2, kGpu, At(0));                 // even though job 2 ran least recently
  ledger.Ran(3, kGpu, At(100));
  ledger.Ran(1, kGpu, At(200));
  // Resident 4 + 2 + 2, 5 to come back: 3 too many; job 3 has 2, job 1 gives the rest.
  MemoryLedger::Plan plan = ledger.MakeRoom(kGpu, 2);
  CHECK(plan.feasible);
  REQUIRE(plan.evictions.size() == 2);
  CHECK(plan.evictions[0].conn == 31);
  CHECK(plan.evictions[0].bytes == 2 * kGiB);
  CHECK(plan.evictions[1].conn == 11);
  CHECK(plan.evictions[1].bytes == 1 * kGiB);
  CHECK(plan.bytes == 3 * kGiB);
  CHECK(EvictedFrom(plan, 21) == 0);
  CHECK(EvictedFrom(plan, 22) == 0);
}

TEST_CASE("ledger: a job that never ran is evicted before one that did") {
  MemoryLedger ledger(NoContext());
  ledger.Report(11, 1, kGpu, Rep(10, 4, 4));
  ledger.Report(31, 3, kGpu, Rep(10, 4, 4));
  ledger.Report(21, 2, kGpu, Rep(10, 3, 0));
  ledger.Ran(1, kGpu, At(0));
  MemoryLedger::Plan plan = ledger.MakeRoom(kGpu, 2);
  REQUIRE(plan.evictions.size() == 1);
  CHECK(plan.evictions[0].conn == 31);
  CHECK(plan.evictions[0].bytes == 1 * kGiB);
}

TEST_CASE("ledger: never evicts more than a victim's resident minus fixed") {
  MemoryLedger ledger(NoContext());
  ledger.Report(11, 1, kGpu, Rep(10, 6, 6, 4));  // 2 GiB movable
  ledger.Report(31, 3, kGpu, Rep(10, 3, 3));
  ledger.Report(21, 2, kGpu, Rep(10, 6, 0));  // 9 resident + 6: 5 too many
  ledger.Ran(1, kGpu, At(10));
  ledger.Ran(3, kGpu, At(20));
  MemoryLedger::Plan plan = ledger.MakeRoom(kGpu, 2);
  CHECK(plan.feasible);
  REQUIRE(plan.evictions.size() == 2);
  CHECK(plan.evictions[0].conn == 11);
  CHECK(plan.evictions[0].bytes == 2 * kGiB);
  CHECK(plan.evictions[1].conn == 31);
  CHECK(plan.evictions[1].bytes == 3 * kGiB);

  // A victim with only fixed memory resident is skipped.
  ledger.Report(11, 1, kGpu, Rep(10, 6, 4, 4));
  plan = ledger.MakeRoom(kGpu, 2);  // 7 resident + 6: 3 too many, all from job 3
  CHECK(plan.feasible);
  CHECK(EvictedFrom(plan, 11) == 0);
  CHECK(EvictedFrom(plan, 31) == 3 * kGiB);
}

TEST_CASE("ledger: infeasible for GpuMemory when fixed memory blocks") {
  MemoryLedger ledger(NoContext());
  ledger.Report(11, 1, kGpu, Rep(10, 8, 8, 7));  // only 1 GiB can move
  ledger.Report(21, 2, kGpu, Rep(10, 5, 0));     // needs 3
  MemoryLedger::Plan plan = ledger.MakeRoom(kGpu, 2);
  CHECK_FALSE(plan.feasible);
  CHECK(plan.reason == "GpuMemory");
  CHECK(ledger.FixedOfOthers(kGpu, 2) == 7 * kGiB);
}

TEST_CASE("ledger: memory resident beyond the capacity is evicted for a resident holder") {
  MemoryLedger::Options o = NoContext();
  o.gpu_limit = 8 * kGiB;
  MemoryLedger ledger(o);
  ledger.Report(11, 1, kGpu, Rep(10, 9, 9));  // resident past the 8 GiB limit
  ledger.Report(21, 2, kGpu, Rep(10, 1, 1));  // fully resident: nothing to bring back
  MemoryLedger::Plan plan = ledger.MakeRoom(kGpu, 2);
  CHECK(plan.feasible);
  REQUIRE(plan.evictions.size() == 1);
  CHECK(plan.evictions[0].conn == 11);
  CHECK(plan.evictions[0].bytes == 2 * kGiB);
}

TEST_CASE("ledger: a noted eviction counts as done until the next report") {
  MemoryLedger ledger(NoContext());
  ledger.Report(11, 1, kGpu, Rep(10, 6, 6, 1));
  ledger.Report(21, 2, kGpu, Rep(10, 6, 0));
  MemoryLedger::Plan plan = ledger.MakeRoom(kGpu, 2);
  REQUIRE(plan.evictions.size() == 1);
  ledger.NoteEviction(plan.evictions[0].conn, kGpu, plan.evictions[0].bytes);
  CHECK(ledger.Totals(1).resident == 4 * kGiB);
  CHECK(ledger.SwappedBytes() == 8 * kGiB);
  CHECK(ledger.MakeRoom(kGpu, 2).evictions.empty());  // not asked twice

  // Never below the fixed memory.
  ledger.NoteEviction(11, kGpu, 10 * kGiB);
  CHECK(ledger.Totals(1).resident == 1 * kGiB);
  // Unknown connections and GPUs change nothing.
  ledger.NoteEviction(99, kGpu, kGiB);
  ledger.NoteEviction(11, kOther, kGiB);
  CHECK(ledger.Totals(1).resident == 1 * kGiB);

  // The next report is the truth again (the eviction failed, say).
  ledger.Report(11, 1, kGpu, Rep(10, 6, 6, 1));
  CHECK(ledger.Totals(1).resident == 6 * kGiB);
  CHECK(ledger.MakeRoom(kGpu, 2).bytes == 2 * kGiB);
}

TEST_CASE("ledger: FixedOfOthers counts other jobs' fixed memory and contexts") {
  MemoryLedger::Options o;
  o.context_bytes = 1 * kGiB;
  MemoryLedger ledger(o);
  ledger.Report(11, 1, kGpu, Rep(80, 4, 4, 2));
  ledger.Report(12, 1, kGpu, Rep(80, 1, 1, 0));
  ledger.Report(21, 2, kGpu, Rep(80, 9, 9, 5));
  ledger.Report(31, 3, kOther, Rep(80, 9, 9, 7));  // another GPU
  CHECK(ledger.FixedOfOthers(kGpu, 2) == (2 + 1 + 0 + 1) * kGiB);
  CHECK(ledger.FixedOfOthers(kGpu, 1) == (5 + 1) * kGiB);
  CHECK(ledger.FixedOfOthers(kGpu, 3) == (2 + 1 + 0 + 1 + 5 + 1) * kGiB);
  CHECK(ledger.FixedOfOthers(kOther, 3) == 0);
  CHECK(ledger.FixedOfOthers("GPU-9", 1) == 0);
}

TEST_CASE("ledger: UsedBy counts the job's allocations, swapped or not, and a context each") {
  MemoryLedger::Options o;
  o.context_bytes = 1 * kGiB;
  MemoryLedger ledger(o);
  ledger.Report(11, 1, kGpu, Rep(80, 10, 4, 2));  // 6 GiB swapped out
  ledger.Report(12, 1, kGpu, Rep(80, 3, 3));
  ledger.Report(12, 1, kOther, Rep(80, 7, 7));  // the same process on another GPU
  ledger.Report(21, 2, kGpu, Rep(80, 9, 9, 5));
  CHECK(ledger.UsedBy(1, kGpu) == (10 + 1 + 3 + 1) * kGiB);
  CHECK(ledger.UsedBy(1, kOther) == (7 + 1) * kGiB);
  CHECK(ledger.UsedBy(2, kGpu) == (9 + 1) * kGiB);
  CHECK(ledger.UsedBy(3, kGpu) == 0);
  CHECK(ledger.UsedBy(1, "GPU-9") == 0);
  ledger.Forget(12);
  CHECK(ledger.UsedBy(1, kGpu) == (10 + 1) * kGiB);
}

TEST_CASE("ledger: Totals sums a job's processes") {
  MemoryLedger ledger(NoContext());
  proto::MemReportMsg a = Rep(80, 4, 3, 1, 2);
  a.host_bytes = 5 * kGiB;
  a.swaps_out = 2;
  a.swaps_in = 1;
  a.bytes_out = 100;
  a.bytes_in = 50;
  a.swap_ns = 1000;
  a.engine = 1;
  proto::MemReportMsg b = Rep(80, 6, 6);
  b.host_bytes = 3 * kGiB;
  b.swaps_out = 1;
  b.bytes_out = 10;
  b.swap_ns = 7;
  b.engine = 0;
  proto::MemReportMsg a_other = Rep(40, 2, 2);
  a_other.host_bytes = 5 * kGiB;  // the same process's host pool, seen from its other GPU
  a_other.swaps_out = 4;
  a_other.engine = 1;
  ledger.Report(11, 1, kGpu, a);
  ledger.Report(12, 1, kGpu, b);
  ledger.Report(11, 1, kOther, a_other);
  ledger.Report(21, 2, kGpu, Rep(80, 30, 30));  // another job

  MemoryLedger::JobTotals t = ledger.Totals(1);
  CHECK(t.allocated == 12 * kGiB);
  CHECK(t.resident == 11 * kGiB);
  CHECK(t.fixed == 1 * kGiB);
  CHECK(t.demand == 2 * kGiB);
  CHECK(t.host_bytes == 8 * kGiB);  // once per process
  CHECK(t.swaps_out == 7);
  CHECK(t.swaps_in == 1);
  CHECK(t.bytes_out == 110);
  CHECK(t.bytes_in == 50);
  CHECK(t.swap_ns == 1007);
  CHECK(t.engine == 1);

  MemoryLedger::JobTotals on_gpu = ledger.Totals(1, kGpu);
  CHECK(on_gpu.allocated == 10 * kGiB);
  CHECK(on_gpu.resident == 9 * kGiB);
  CHECK(on_gpu.swaps_out == 3);
  CHECK(ledger.Totals(1, kOther).allocated == 2 * kGiB);
  CHECK(ledger.Totals(2).allocated == 30 * kGiB);
  CHECK(ledger.Totals(7).allocated == 0);
}

TEST_CASE("ledger: Forget removes a connection") {
  MemoryLedger ledger(NoContext());
  ledger.Report(11, 1, kGpu, Rep(10, 6, 6));
  ledger.Report(11, 1, kOther, Rep(10, 2, 1));
  ledger.Report(21, 2, kGpu, Rep(10, 6, 0));
  CHECK_FALSE(ledger.Fits(kGpu));
  CHECK(ledger.SwappedBytes() == 7 * kGiB);
  ledger.Forget(11);
  CHECK(ledger.Totals(1).allocated == 0);
  CHECK(ledger.Fits(kGpu));
  CHECK(ledger.SwappedBytes() == 6 * kGiB);
  CHECK(ledger.MakeRoom(kGpu, 2).evictions.empty());
  CHECK(ledger.Capacity(kGpu) == 10 * kGiB);  // the GPU's size stays known
  ledger.Forget(11);                          // twice: nothing happens
  CHECK(ledger.Totals(2).allocated == 6 * kGiB);
}

}  // namespace
}  // namespace gshare::unit_memory_ledger
