// MemoryCoordinator: room before exclusive grants, the handoff's price, residents' room, the
// incumbent's room, against a real Arbiter and MemoryLedger, a manual clock and a host that
// records the evictions it is asked to send.
#include "daemon/gpu/memory_coordinator.h"

#include <doctest/doctest.h>

#include <utility>
#include <vector>

#include "daemon/memory_parts.h"

namespace gshare::unit_memory_coordinator {
namespace {

using namespace unit_memory_parts;  // NOLINT: the shared parts of these tests

struct RecordingHost : MemoryCoordinator::Host {
  std::vector<MemoryLedger::Eviction> sent;
  uint64_t checkpoints = 0;  // the last checkpoint request's seq
  void SendEvictions(const GpuKey&, const MemoryLedger::Plan& plan) override {
    for (const MemoryLedger::Eviction& e : plan.evictions) {
      sent.push_back(e);
      if (e.checkpoint) ++checkpoints;
    }
  }
  uint64_t LastCheckpointSent() const override { return checkpoints; }
  uint64_t EvictedFrom(ConnId conn) const {
    uint64_t n = 0;
    for (const MemoryLedger::Eviction& e : sent) n += e.conn == conn ? e.bytes : 0;
    return n;
  }
};

// The daemon's memory parts, the evictions recorded.
struct Parts : MemoryParts<RecordingHost> {
  // Sends the grants in `actions` through PrepareGrant, as LeaseOutbox::Apply does; the epoch of
  // the grant to `conn` (0: none).
  uint64_t Grants(const LeaseActions& actions, ConnId conn) {
    uint64_t epoch = 0;
    for (const LeaseAction& a : actions) {
      if (a.kind != LeaseAction::Kind::kGrant) continue;
      memory.PrepareGrant(a.gpu, static_cast<JobId>(a.conn / 10), a.epoch);
      if (a.conn == conn) epoch = a.epoch;
    }
    return epoch;
  }
  void Advance(int ms) { clock.Advance(Millis(ms)); }
};

TEST_CASE("memory coordinator: a handoff is priced, evicts for the new holder and is timed") {
  Parts p;
  p.AddJob(1, 0);
  p.AddJob(2, 0);
  p.Report(1, 50, 50);
  p.Report(2, 50, 0);  // swapped out: its turn brings 50 GiB back
  const uint64_t e1 = p.Grants(p.arbiter.Request(11, kGpu, p.clock.Now()), 11);
  REQUIRE(e1 != 0);
  CHECK(p.memory_host.sent.empty());  // 30 GiB free: job 1's first turn needs no eviction
  p.arbiter.SwappedIn(kGpu, e1, p.clock.Now());  // its swap-in report: the quantum starts
  p.Advance(10);
  LeaseActions a = p.arbiter.Request(21, kGpu, p.clock.Now());
  REQUIRE(a.size() == 1);  // CONTENDED to job 1
  // Job 2's room is 20 GiB of job 1's, into host memory job 1 has not pinned: not priced.
  CHECK(p.memory.PriceHandoff(kGpu) == proto::kHandoffNever);
  CHECK_FALSE(p.memory.NeedsReprice(kGpu));
  // Job 1 pinned 40 GiB: priced at the larger direction, job 2's 50 GiB swap-in; the holder
  // is to be told again.
  p.Report(1, 50, 50, 40);
  CHECK(p.memory.HandoffBytes(kGpu) == 50 * kGiB);
  CHECK(p.memory.NeedsReprice(kGpu));
  CHECK(p.memory.PriceHandoff(kGpu) == 50 * kGiB);
  CHECK_FALSE(p.memory.NeedsReprice(kGpu));

  p.Advance(20000);
  a = p.arbiter.Tick(p.clock.Now());
  REQUIRE(a.size() == 1);  // DROP to job 1
  p.memory.Dropped(kGpu);
  p.Advance(40);
  const uint64_t e2 = p.Grants(p.arbiter.Released(11, kGpu, e1, p.clock.Now()), 21);
  REQUIRE(e2 != 0);
  // Room for job 2's 50 GiB and its first turn's growth (12.5 GiB), all from job 1.
  CHECK(p.memory_host.EvictedFrom(11) == 50 * kGiB / 4 + 20 * kGiB);
  CHECK(p.memory_host.EvictedFrom(21) == 0);
  // Its quantum starts at its swap-in's end: no DROP at the grant's quantum.
  p.Advance(50);
  p.arbiter.Request(11, kGpu, p.clock.Now());
  p.Advance(20000);
  CHECK(p.arbiter.Tick(p.clock.Now()).empty());
  p.memory.SwappedIn(kGpu, 2, e2, {.bytes = 50 * kGiB, .ms = 900});
  nlohmann::json g;
  p.memory.AddGpuJson(kGpu, &g);
  CHECK(g["capacity"] == 80 * kGiB);
  CHECK(g["handoffs"] == 1);
  CHECK(g["last_handoff"]["from"] == 1);
  CHECK(g["last_handoff"]["to"] == 2);
  CHECK(g["last_handoff"]["evict_bytes"] == 50 * kGiB / 4 + 20 * kGiB);
  CHECK(g["last_handoff"]["drain_ms"] == doctest::Approx(40));
}

TEST_CASE("memory coordinator: fixed memory lets a job try, a checkpointed one waits") {
  Parts p;
  p.AddJob(1, 0);
  p.AddJob(2, 0);
  p.Report(1, 70, 70, 0, 70);  // all fixed
  p.Report(2, 20, 0);
  // Only the others' fixed memory is in the way: it may try (its swap-in waits for room).
  CHECK(p.memory.CanGrant(kGpu, 2));
  REQUIRE(p.memory.WaitReason(2) != nullptr);
  CHECK(*p.memory.WaitReason(2) == "GpuMemory");
  // A checkpointed process restored without room would be lost: it waits.
  p.ledger.SetCheckpointed(21, true);
  CHECK_FALSE(p.memory.CanGrant(kGpu, 2));
  // Room again: granted, and no reason is left for status.
  p.Report(1, 10, 10, 0, 10);
  CHECK(p.memory.CanGrant(kGpu, 2));
  CHECK(p.memory.WaitReason(2) == nullptr);
  p.memory.Forget(2);
}

TEST_CASE("memory coordinator: a resident's room never comes from the turn's holder") {
  Parts p;
  p.AddJob(1, 10);  // the resident
  p.AddJob(2, 0);
  p.AddJob(3, 0);
  p.Report(2, 60, 60);
  p.Report(3, 20, 20);
  p.Report(1, 10, 0);  // swapped out: 10 GiB to come back on an 80 GiB GPU that is full
  p.ledger.Ran(2, kGpu, p.clock.Now());  // job 2 ran least recently: the first victim
  p.Advance(10);
  p.ledger.Ran(3, kGpu, p.clock.Now());
  CHECK(p.arbiter.SetResidents(kGpu, {1}, p.clock.Now()).empty());
  REQUIRE(p.Grants(p.arbiter.Request(21, kGpu, p.clock.Now()), 21) != 0);  // job 2's turn
  p.memory_host.sent.clear();
  const uint64_t e1 = p.Grants(p.arbiter.Request(11, kGpu, p.clock.Now()), 11);
  REQUIRE(Arbiter::IsResidentEpoch(e1));
  // The ledger's plan takes job 2's memory first, but job 2 runs its turn: not asked.
  CHECK(p.memory_host.EvictedFrom(21) == 0);
  // The resident's allocation waits: room is asked of the others, not of the holder.
  p.ledger.Ran(2, kGpu, p.clock.Now() + Millis(1));
  p.ledger.Ran(3, kGpu, p.clock.Now());
  p.memory_host.sent.clear();
  proto::MemReportMsg m{};
  m.engine = static_cast<uint32_t>(proto::MemoryEngine::kSwap);
  m.total = 80 * kGiB;
  m.allocated = 10 * kGiB;
  m.demand = 2 * kGiB;
  p.ledger.Report(11, 1, kGpu, m);
  p.memory.ResidentsDemand(kGpu);
  CHECK(p.memory_host.EvictedFrom(21) == 0);
  CHECK(p.memory_host.EvictedFrom(31) == 12 * kGiB);
}

TEST_CASE("memory coordinator: the incumbent's room waits for the others to drain") {
  Parts p;
  p.AddJob(1, 0);
  p.AddJob(2, 0);
  p.Report(1, 50, 50);
  p.Report(2, 40, 40);  // 90 GiB on 80: they no longer fit together
  const uint64_t e1 = p.Grants(p.arbiter.Request(11, kGpu, p.clock.Now()), 11);
  p.arbiter.Request(21, kGpu, p.clock.Now());
  const uint64_t e2 = p.Grants(p.arbiter.SetShared(kGpu, true, p.clock.Now()), 21);
  REQUIRE(e1 != 0);
  REQUIRE(e2 != 0);
  p.Advance(5000);
  std::optional<JobId> first = p.memory.ExclusiveFirst(kGpu);
  REQUIRE(first.has_value());
  p.arbiter.SetShared(kGpu, false, p.clock.Now(), first);
  REQUIRE(p.arbiter.Holder(kGpu) == first);
  const JobId other = *first == 1 ? 2 : 1;
  p.memory_host.sent.clear();
  p.memory.KeepIncumbent(kGpu);
  CHECK(p.memory_host.sent.empty());  // the other job still holds: its memory cannot move yet
  p.arbiter.Released(other * 10 + 1, kGpu, other == 1 ? e1 : e2, p.clock.Now());
  p.memory.MakeIncumbentRoom(kGpu);
  CHECK(p.memory_host.EvictedFrom(other * 10 + 1) > 0);
  CHECK(p.memory_host.EvictedFrom(*first * 10 + 1) == 0);
  // Made once.
  p.memory_host.sent.clear();
  p.memory.MakeIncumbentRoom(kGpu);
  CHECK(p.memory_host.sent.empty());
}

TEST_CASE("memory coordinator: a lower job waits for a higher one's memory until it is staged") {
  Parts p;
  p.AddJob(1, 10);  // a service, idle between requests: it holds no lease
  p.AddJob(2, 0);   // a training that arrives
  p.Report(1, 60, 60);
  p.Report(2, 40, 0);
  LeaseActions a = p.arbiter.Request(21, kGpu, p.clock.Now());
  CHECK(p.Grants(a, 21) == 0);
  REQUIRE(p.memory.WaitReason(2) != nullptr);
  CHECK(*p.memory.WaitReason(2) == "HigherPriorityMemory");
  p.Advance(1000);
  CHECK(p.Grants(p.arbiter.Tick(p.clock.Now()), 21) == 0);  // nothing changed: it still waits
  CHECK(p.memory_host.sent.empty());
  // The service stays idle and its memory is copied out: that room may be taken.
  proto::MemReportMsg staged = SwapReport(60, 60);
  staged.staged = 60 * kGiB;
  p.ledger.Report(11, 1, kGpu, staged);
  p.Advance(1000);
  CHECK(p.Grants(p.arbiter.Tick(p.clock.Now()), 21) != 0);
  CHECK(p.memory.WaitReason(2) == nullptr);
  // 20 GiB short, and a quarter of its 40 for its first turn's growth (GrantPlan).
  CHECK(p.memory_host.EvictedFrom(11) == 30 * kGiB);
}

TEST_CASE("memory coordinator: a holder whose allocation cannot get a higher job's room says so") {
  Parts p;
  p.AddJob(1, 10);  // a service holding most of the GPU, idle between requests
  p.AddJob(2, 0);   // a training that got its turn in the room left, then grows
  p.Report(1, 60, 60);
  p.Report(2, 10, 10);
  REQUIRE(p.Grants(p.arbiter.Request(21, kGpu, p.clock.Now()), 21) != 0);
  CHECK(p.memory.WaitReason(2) == nullptr);
  proto::MemReportMsg grown = SwapReport(30, 10);
  grown.demand = 20 * kGiB;  // an allocation waits for 20 GiB more
  p.ledger.Report(21, 2, kGpu, grown);
  p.memory.HolderDemand(kGpu, 21, 2);
  REQUIRE(p.memory.WaitReason(2) != nullptr);
  CHECK(*p.memory.WaitReason(2) == "HigherPriorityMemory");
  CHECK(p.memory_host.EvictedFrom(11) == 0);  // the service keeps its memory
  p.memory.DemandMet(2);  // the service ended or shrank; the allocation got its room
  CHECK(p.memory.WaitReason(2) == nullptr);
}

}  // namespace
}  // namespace gshare::unit_memory_coordinator
