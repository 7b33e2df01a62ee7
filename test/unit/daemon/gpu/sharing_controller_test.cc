// SharingController: shared mode while the jobs fit, exclusive mode with its hysteresis,
// priorities with and without the priority board, residents, against a real Arbiter,
// MemoryLedger and MemoryCoordinator, a manual clock and a host that records what it is asked.
#include "daemon/gpu/sharing_controller.h"

#include <doctest/doctest.h>

#include <set>
#include <vector>

#include "daemon/memory_parts.h"

namespace gshare::unit_sharing_controller {
namespace {

using namespace unit_memory_parts;  // NOLINT: the shared parts of these tests

// The memory coordinator's host: evictions are recorded, never sent.
struct MemoryHost : MemoryCoordinator::Host {
  void SendEvictions(const GpuKey&, const MemoryLedger::Plan&) override {}
  uint64_t LastCheckpointSent() const override { return 0; }
};

struct RecordingHost : SharingController::Host {
  MemoryCoordinator* memory = nullptr;
  std::vector<LeaseAction> applied;
  std::set<GpuKey> known{kGpu};
  std::vector<GpuKey> gap_watch, pins;
  // Grants go through the memory coordinator, as Daemon::Apply sends them.
  void Apply(const LeaseActions& actions) override {
    for (const LeaseAction& a : actions) {
      if (a.kind == LeaseAction::Kind::kGrant) {
        memory->PrepareGrant(a.gpu, static_cast<JobId>(a.conn / 10), a.epoch);
      }
      applied.push_back(a);
    }
  }
  bool KnowsGpu(const GpuKey& gpu) const override { return known.count(gpu) != 0; }
  void UpdateGapWatch(const GpuKey& gpu) override { gap_watch.push_back(gpu); }
  void AskHolderToPin(const GpuKey& gpu) override { pins.push_back(gpu); }
  bool Granted(ConnId conn) const {
    for (const LeaseAction& a : applied) {
      if (a.kind == LeaseAction::Kind::kGrant && a.conn == conn) return true;
    }
    return false;
  }
};

// The daemon's memory parts and the controller. Job j has connection j * 10 + 1.
struct Parts : MemoryParts<MemoryHost> {
  explicit Parts(bool sharing_auto = true) : sharing_auto(sharing_auto) { host.memory = &memory; }
  bool sharing_auto;
  bool board = true;
  RecordingHost host;
  SharingController sharing{SharingController::Options{sharing_auto, [this] { return board; }},
                            arbiter,
                            ledger,
                            memory,
                            clock,
                            host};

  // Job `job` of `priority` with `gib` resident of 80 GiB, asking for the GPU.
  void AddJob(JobId job, int priority, uint64_t gib) {
    MemoryParts::AddJob(job, priority);
    Report(job, gib, gib);
    host.Apply(arbiter.Request(job * 10 + 1, kGpu, clock.Now()));
  }
};

TEST_CASE(
    "sharing controller: shared while the jobs fit, exclusive past it, shared after kSettle") {
  Parts p;
  p.AddJob(1, 0, 30);
  p.AddJob(2, 0, 30);
  CHECK_FALSE(p.host.Granted(21));  // job 1 holds it alone
  p.sharing.Update(kGpu);
  CHECK(p.arbiter.IsShared(kGpu));
  CHECK(p.host.Granted(21));  // the switch granted the waiter
  CHECK(p.host.gap_watch == std::vector<GpuKey>{kGpu});
  CHECK(p.sharing.Switches(kGpu) == 1);

  p.AddJob(3, 0, 40);  // 100 GiB on 80
  p.sharing.Update(kGpu);
  CHECK_FALSE(p.arbiter.IsShared(kGpu));
  CHECK(p.sharing.Switches(kGpu) == 2);
  CHECK(p.host.pins == std::vector<GpuKey>{kGpu});  // the holder pins ahead

  // Job 3 leaves: they fit again, but the GPU stays exclusive kSettle after the switch.
  p.ledger.Forget(31);
  p.host.Apply(p.arbiter.Disconnected(31, p.clock.Now()));
  p.arbiter.RemoveJob(3);
  p.clock.Advance(Millis(500));
  p.sharing.Update(kGpu);
  CHECK_FALSE(p.arbiter.IsShared(kGpu));
  REQUIRE(p.sharing.NextDeadline().has_value());
  CHECK(*p.sharing.NextDeadline() == p.clock.Now() + Millis(500));
  p.sharing.Tick({kGpu});  // not yet
  CHECK_FALSE(p.arbiter.IsShared(kGpu));
  p.clock.Advance(Millis(500));
  p.sharing.Tick({kGpu});
  CHECK(p.arbiter.IsShared(kGpu));
  CHECK(p.sharing.Switches(kGpu) == 3);
}

TEST_CASE("sharing controller: two priorities share only with the board; the top one resides") {
  Parts off;
  off.board = false;
  off.AddJob(1, 5, 20);
  off.AddJob(2, 0, 20);
  off.sharing.Update(kGpu);
  CHECK_FALSE(off.arbiter.IsShared(kGpu));  // without the board: turns
  CHECK_FALSE(off.arbiter.IsResident(kGpu, 1));

  Parts on;
  on.AddJob(1, 5, 20);
  on.AddJob(2, 0, 20);
  on.sharing.Update(kGpu);
  CHECK(on.arbiter.IsShared(kGpu));
  on.AddJob(3, 0, 50);  // 90 GiB on 80: exclusive, and job 1 fits beside either other job
  on.sharing.Update(kGpu);
  CHECK_FALSE(on.arbiter.IsShared(kGpu));
  CHECK(on.arbiter.IsResident(kGpu, 1));
  CHECK_FALSE(on.arbiter.IsResident(kGpu, 2));
}

TEST_CASE(
    "sharing controller: a lower job that outgrows the room beside the top one never "
    "takes the GPU from it") {
  // A service that leaves little room, and a training that arrives small and then grows past
  // it: the service stays resident, holding its grant, however long the training waits.
  Parts p;
  p.AddJob(1, 10, 70);
  p.AddJob(2, 0, 2);
  p.sharing.Update(kGpu);
  REQUIRE(p.arbiter.IsShared(kGpu));
  p.Report(2, 20, 20);
  p.sharing.Update(kGpu);
  CHECK_FALSE(p.arbiter.IsShared(kGpu));
  for (int i = 0; i < 5; ++i) {
    p.clock.Advance(Millis(1000));
    p.sharing.Update(kGpu);
    CHECK(p.arbiter.IsResident(kGpu, 1));
  }
  for (const LeaseAction& a : p.host.applied) {
    CHECK_FALSE((a.kind == LeaseAction::Kind::kDrop && a.conn == 11));
  }
}

TEST_CASE("sharing controller: sharing = exclusive keeps one job at a time and no residents") {
  Parts p(/*sharing_auto=*/false);
  p.AddJob(1, 5, 10);
  p.AddJob(2, 0, 10);
  p.sharing.Update(kGpu);
  CHECK_FALSE(p.arbiter.IsShared(kGpu));
  CHECK_FALSE(p.arbiter.IsResident(kGpu, 1));
  CHECK(p.sharing.Switches(kGpu) == 0);
}

TEST_CASE("sharing controller: a GPU no shim named is left alone") {
  Parts p;
  p.host.known.clear();
  p.AddJob(1, 0, 10);
  p.AddJob(2, 0, 10);
  p.sharing.Update(kGpu);
  CHECK_FALSE(p.arbiter.IsShared(kGpu));
  CHECK(p.sharing.Switches(kGpu) == 0);
}

}  // namespace
}  // namespace gshare::unit_sharing_controller
