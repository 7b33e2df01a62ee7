// CheckpointCoordinator with a scripted checkpoint service, a recording host and a real ledger.
#include "daemon/checkpoint/checkpoint_coordinator.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "daemon/scripted_checkpoints.h"

namespace gshare::unit_checkpoint_coordinator {
namespace {

constexpr uint64_t kGiB = 1ull << 30;
const GpuKey kGpu = "GPU-0";

using unit_scripted_checkpoints::ScriptedService;

struct RecordingHost final : CheckpointCoordinator::Host {
  std::map<ConnId, CheckpointCoordinator::Process> live;
  std::vector<std::pair<ConnId, std::string>> sent;
  std::vector<std::pair<GpuKey, uint64_t>> delivered;
  int eviction_plans = 0;
  std::vector<pid_t> killed;

  std::optional<CheckpointCoordinator::Process> LiveProcess(ConnId conn) override {
    auto it = live.find(conn);
    if (it == live.end()) return std::nullopt;
    return it->second;
  }
  void SendEvictions(const GpuKey&, const MemoryLedger::Plan&) override { ++eviction_plans; }
  void SendGrant(ConnId conn, const std::string& frame) override { sent.emplace_back(conn, frame); }
  void GrantDelivered(const GpuKey& gpu, uint64_t epoch) override {
    delivered.emplace_back(gpu, epoch);
  }
  void KillProcess(pid_t pid) override { killed.push_back(pid); }
};

proto::MemReportMsg Rep(uint64_t allocated_gib, uint64_t resident_gib) {
  proto::MemReportMsg m{};
  m.total = 80 * kGiB;
  m.allocated = allocated_gib * kGiB;
  m.resident = resident_gib * kGiB;
  return m;
}

struct Fixture {
  ScriptedService service;
  RecordingHost host;
  MemoryLedger ledger{MemoryLedger::Options{}};
  CheckpointCoordinator coordinator{service, ledger, host};

  // Connection `conn` of job `job` (pid conn * 100) holding `allocated` GiB, `resident` on
  // the GPU.
  void Peer(ConnId conn, JobId job, uint64_t allocated, uint64_t resident) {
    host.live[conn] = {static_cast<pid_t>(conn * 100), job};
    ledger.Report(conn, job, kGpu, Rep(allocated, resident));
  }
};

TEST_CASE("CheckpointCoordinator restores a checkpointed process before its grant goes out") {
  Fixture f;
  f.Peer(11, 1, 20, 20);
  f.Peer(21, 2, 40, 40);
  REQUIRE(f.coordinator.Checkpoint(21, {2100, 2}, 500, kGpu) == 1);
  CHECK(f.ledger.IsCheckpointed(21));
  CHECK(f.coordinator.InFlight(21));
  REQUIRE(f.coordinator.Defer(21, kGpu, 7, "GRANT"));
  f.coordinator.Pump();
  // Its checkpoint is not done: no restore, no grant.
  CHECK(f.service.requests.size() == 1);
  CHECK(f.host.sent.empty());
  CHECK(f.host.delivered.empty());

  f.service.done = 1;
  auto call = f.coordinator.Answered(1);
  REQUIRE(call.has_value());
  CHECK(call->op == CheckpointOp::kCheckpoint);
  CHECK_FALSE(f.coordinator.InFlight(21));
  f.coordinator.Pump();
  REQUIRE(f.service.requests.size() == 2);
  const ScriptedService::Request& restore = f.service.requests[1];
  CHECK(restore.op == CheckpointOp::kRestore);
  CHECK(restore.pid == 2100);
  CHECK(restore.need_bytes == 40 * kGiB + f.ledger.options().context_bytes);
  CHECK(restore.gpu == kGpu);
  CHECK(restore.from_gpu.empty());  // restored where it was
  CHECK(f.coordinator.GrantsAwaiting(2) == std::vector<std::pair<GpuKey, uint64_t>>{{kGpu, 7}});
  CHECK(f.host.sent.empty());

  f.service.done = 2;
  f.ledger.SetCheckpointed(21, false);  // the daemon, on the restore's reply
  f.coordinator.Pump();
  CHECK(f.host.sent == std::vector<std::pair<ConnId, std::string>>{{21, "GRANT"}});
  CHECK(f.host.delivered == std::vector<std::pair<GpuKey, uint64_t>>{{kGpu, 7}});
  CHECK(f.coordinator.deferred() == 0);
}

TEST_CASE("CheckpointCoordinator: a restore waits for what the checkpoint freed, when more") {
  Fixture f;
  f.Peer(21, 2, 40, 40);
  const uint64_t reported = 40 * kGiB + f.ledger.options().context_bytes;
  // Checkpoints process 21 measuring `gpu`, its reply saying it freed `freed` bytes, then defers
  // grant `epoch` to it; the need of the restore that grant asks for.
  auto restore_need = [&](const GpuKey& gpu, uint64_t freed, uint64_t epoch) {
    const uint64_t seq = f.coordinator.Checkpoint(21, {2100, 2}, 500, gpu);
    REQUIRE(seq == f.service.requests.size());
    CHECK(f.service.requests.back().op == CheckpointOp::kCheckpoint);
    CHECK(f.service.requests.back().gpu == gpu);  // the GPU whose freed bytes are measured
    f.service.done = seq;
    std::optional<CheckpointCoordinator::Call> call = f.coordinator.Answered(seq);
    REQUIRE(call.has_value());
    CHECK(call->gpu == gpu);
    f.coordinator.Checkpointed(*call, freed);
    REQUIRE(f.coordinator.Defer(21, kGpu, epoch, "GRANT"));
    f.coordinator.Pump();
    REQUIRE(f.service.requests.back().op == CheckpointOp::kRestore);
    return f.service.requests.back().need_bytes;
  };
  // The restore's reply, and the daemon's part in it.
  auto restored = [&] {
    f.service.done = f.service.requests.size();
    f.ledger.SetCheckpointed(21, false);
    f.coordinator.Restored(21);
    f.coordinator.Pump();
  };
  // More than the reports say (a pool's reserve), then less.
  CHECK(restore_need(kGpu, reported + 3 * kGiB, 1) == reported + 3 * kGiB);
  restored();
  CHECK(restore_need(kGpu, reported - kGiB, 2) == reported);
  restored();
  // Unmeasured (0): the reports decide.
  CHECK(restore_need(kGpu, 0, 3) == reported);
  restored();
  // A restore that found no room for its footprint waits only for the reports next time.
  CHECK(restore_need(kGpu, reported + 60 * kGiB, 4) == reported + 60 * kGiB);
  f.coordinator.NoRoom(21);
  f.service.done = f.service.requests.size();
  f.coordinator.Pump();  // the grant of the failed restore is done with (the engine releases it)
  REQUIRE(f.coordinator.Defer(21, kGpu, 5, "GRANT"));
  f.coordinator.Pump();
  CHECK(f.service.requests.back().need_bytes == reported);
  restored();
  // A footprint measured on another GPU says nothing of this one.
  CHECK(restore_need("GPU-9", reported + 5 * kGiB, 6) == reported);
}

TEST_CASE("CheckpointCoordinator restores a moved process onto its new GPU, from its first") {
  const GpuKey kNew = "GPU-2";
  Fixture f;
  f.Peer(21, 2, 4, 4);
  REQUIRE(f.coordinator.Checkpoint(21, {2100, 2}, 500, kGpu) == 1);
  f.service.done = 1;
  f.coordinator.Answered(1);
  // Moved twice before it ran: the driver checkpointed it on kGpu, so the pair names kGpu.
  f.ledger.MoveConn(21, kGpu, "GPU-1");
  f.coordinator.RestoreElsewhere(21, kGpu);
  f.ledger.MoveConn(21, "GPU-1", kNew);
  f.coordinator.RestoreElsewhere(21, "GPU-1");
  REQUIRE(f.coordinator.Defer(21, kNew, 3, "GRANT"));
  f.coordinator.Pump();
  REQUIRE(f.service.requests.size() == 2);
  CHECK(f.service.requests[1].gpu == kNew);
  CHECK(f.service.requests[1].from_gpu == kGpu);
  f.coordinator.Restored(21);
  f.coordinator.RestoreElsewhere(21, kNew);  // a later move starts from where it now is
  f.ledger.MoveConn(21, kNew, kGpu);
  f.service.done = 2;
  f.ledger.SetCheckpointed(21, false);
  f.coordinator.Pump();  // the first grant goes out
  REQUIRE(f.coordinator.Checkpoint(21, {2100, 2}, 500, kGpu) == 3);
  f.service.done = 3;
  REQUIRE(f.coordinator.Defer(21, kGpu, 4, "GRANT"));
  f.coordinator.Pump();
  REQUIRE(f.service.requests.size() == 4);
  CHECK(f.service.requests[3].from_gpu == kNew);
}

TEST_CASE("CheckpointCoordinator holds a grant behind checkpoints under way, not otherwise") {
  Fixture f;
  f.Peer(11, 1, 20, 20);
  f.Peer(31, 3, 10, 10);
  CHECK_FALSE(f.coordinator.Defer(31, kGpu, 3, "G"));  // the helper is idle
  REQUIRE(f.coordinator.Checkpoint(11, {1100, 1}, 500, kGpu) == 1);
  REQUIRE(f.coordinator.Defer(31, kGpu, 4, "G"));
  f.coordinator.Pump();
  CHECK(f.host.sent.empty());
  f.service.done = 1;
  f.coordinator.Pump();
  CHECK(f.service.requests.size() == 1);  // no restore for a process that is not checkpointed
  CHECK(f.host.sent == std::vector<std::pair<ConnId, std::string>>{{31, "G"}});
  CHECK(f.host.delivered == std::vector<std::pair<GpuKey, uint64_t>>{{kGpu, 4}});
}

TEST_CASE("CheckpointCoordinator makes room before a restore, and drops grants of lost peers") {
  Fixture f;
  f.Peer(11, 1, 60, 60);
  f.Peer(21, 2, 40, 40);
  f.Peer(31, 3, 1, 1);
  REQUIRE(f.coordinator.Checkpoint(21, {2100, 2}, 500, kGpu) == 1);
  f.service.done = 1;
  REQUIRE(f.coordinator.Defer(21, kGpu, 9, "GRANT"));
  f.coordinator.Pump();
  // 60 GiB resident of job 1 leave no room for job 2's 40: evictions first, no restore.
  CHECK(f.host.eviction_plans == 1);
  CHECK(f.service.requests.size() == 1);
  f.ledger.Report(11, 1, kGpu, Rep(60, 20));  // job 1 moved 40 GiB to the host
  f.coordinator.Pump();
  REQUIRE(f.service.requests.size() == 2);
  CHECK(f.service.requests[1].op == CheckpointOp::kRestore);

  // A grant whose peer went away is delivered (the arbiter drops it) and never sent.
  REQUIRE(f.coordinator.Checkpoint(31, {3100, 3}, 500, kGpu) == 3);
  REQUIRE(f.coordinator.Defer(31, kGpu, 10, "LOST"));
  f.host.live.erase(31);
  f.coordinator.Pump();
  CHECK(f.host.delivered == std::vector<std::pair<GpuKey, uint64_t>>{{kGpu, 10}});
  CHECK(f.host.sent.empty());
}

TEST_CASE("CheckpointCoordinator kills a checkpointed process it can no longer restore") {
  Fixture f;
  f.Peer(21, 2, 4, 4);
  REQUIRE(f.coordinator.Checkpoint(21, {2100, 2}, 500, kGpu) == 1);
  f.service.done = 1;
  f.service.refuse = true;
  REQUIRE(f.coordinator.Defer(21, kGpu, 5, "GRANT"));
  f.coordinator.Pump();
  CHECK(f.host.killed == std::vector<pid_t>{2100});
  CHECK(f.host.sent.empty());
  CHECK(f.host.delivered == std::vector<std::pair<GpuKey, uint64_t>>{{kGpu, 5}});
  CHECK(f.coordinator.deferred() == 0);
}

}  // namespace
}  // namespace gshare::unit_checkpoint_coordinator
