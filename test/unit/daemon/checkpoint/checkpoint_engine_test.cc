// CheckpointEngine: suspension (drain, checkpoint, stop), resume with its restores on the
// process's behalf, the helper's replies (failures, no room, an unusable driver), moves onto
// another GPU and the scheduler's rebalance; against a real Arbiter, MemoryLedger,
// MemoryCoordinator, SharingController and JobTable, a scripted helper, a manual clock and a
// host that records what it is asked (grants go through the engine as LeaseOutbox::Apply sends
// them).
#include "daemon/checkpoint/checkpoint_engine.h"

#include <doctest/doctest.h>
#include <signal.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "daemon/memory_parts.h"
#include "daemon/scripted_checkpoints.h"
#include "daemon/table_parts.h"
#include "gshare/cuda_checkpoint.h"

namespace gshare::unit_checkpoint_engine {
namespace {

using namespace unit_memory_parts;  // NOLINT: the shared parts of these tests
using unit_scripted_checkpoints::ScriptedService;

const GpuKey kGpu1 = "GPU-11111111-1111-1111-1111-111111111111";

struct MemoryHost : MemoryCoordinator::Host {
  void SendEvictions(const GpuKey&, const MemoryLedger::Plan&) override {}
  uint64_t LastCheckpointSent() const override { return 0; }
};

struct Host final : SharingController::Host, CheckpointEngine::Host {
  CheckpointEngine* engine = nullptr;
  MemoryCoordinator* memory = nullptr;
  JobTable* table = nullptr;
  std::vector<LeaseAction> applied;
  std::vector<std::pair<ConnId, std::string>> grants;  // sent, not deferred
  std::vector<JobRecord> saved;
  std::vector<std::pair<JobId, int>> signals;
  std::vector<pid_t> killed;
  bool save_fails = false;

  // As LeaseOutbox::Apply: a grant is priced, then held back while its process is checkpointed.
  void Apply(const LeaseActions& actions) override {
    for (const LeaseAction& a : actions) {
      applied.push_back(a);
      if (a.kind != LeaseAction::Kind::kGrant) continue;
      memory->PrepareGrant(a.gpu, table->conns.at(a.conn)->job, a.epoch);
      if (!engine->DeferGrant(a, "GRANT")) grants.emplace_back(a.conn, "GRANT");
    }
  }
  bool KnowsGpu(const GpuKey& gpu) const override { return table->KnowsGpu(gpu); }
  void UpdateGapWatch(const GpuKey&) override {}
  void AskHolderToPin(const GpuKey&) override {}
  void SendEvictions(const GpuKey&, const MemoryLedger::Plan&) override {}
  void SendGrant(ConnId conn, const std::string& frame) override {
    grants.emplace_back(conn, frame);
  }
  Status SaveRecord(const JobRecord& r) override {
    if (save_fails) return Status::Error("disk full");
    saved.push_back(r);
    return Status::Ok();
  }
  Status NotInState(int64_t id, const std::string& wanted) override {
    return Status::Error("job " + std::to_string(id) + " is not " + wanted);
  }
  void SignalJobProcesses(const ActiveJob& job, int sig) override {
    signals.emplace_back(static_cast<JobId>(job.record.id), sig);
  }
  void KillProcess(pid_t pid) override { killed.push_back(pid); }
};

// Job j has connection j * 10 + 1 (pid j * 100) on kGpu, with `gib` GiB allocated and resident
// (the checkpoint engine's reports).
struct Fixture : MemoryParts<MemoryHost> {
  Host host;
  JobTable table;
  SharingController sharing{
      SharingController::Options{true, [] { return false; }}, arbiter, ledger, memory, clock, host};
  PriorityLanes lanes;
  TimelineRecorder timeline{TimelineRecorder::Options{false}, clock,
                            [](JobId) { return uint32_t{0}; }};
  ScriptedService service;
  int gpu_count = 1;
  std::vector<GpuSample> samples;
  int helper_starts = 0;
  CheckpointEngine engine{
      CheckpointEngine::Options{
          Millis(10000), true, true, [this] { return gpu_count; }, [this] { ++helper_starts; },
          [](const std::string& entry) { return entry == "1"   ? kGpu1
                                                : entry == "0" ? kGpu
                                                               : ""; },
          [this] { return samples; }},
      CheckpointEngine::Parts{table, arbiter, ledger, memory, sharing, lanes, timeline, service,
                              clock},
      host};

  Fixture() {
    host.engine = &engine;
    host.memory = &memory;
    host.table = &table;
    REQUIRE(table.NoteGpu(kGpu, proto::GpuUuid{}, 0));
  }
  ActiveJob& Job(JobId j, uint64_t gib, const std::string& slot = "") {
    const ConnId conn = j * 10 + 1;
    ActiveJob& ref = unit_table_parts::AddJob(table, j, 0, slot);
    ref.shims.insert(conn);
    unit_table_parts::AddConn(table, conn, j, Connection::Kind::kShim, static_cast<pid_t>(j * 100));
    AddJob(j, 0);
    proto::MemReportMsg m = ledger_test::Report80(gib, gib);
    m.engine = static_cast<uint32_t>(proto::MemoryEngine::kCheckpoint);
    ledger.Report(conn, j, kGpu, m);
    return ref;
  }
  // The helper answers every request so far with `result` (checkpoints: having freed `freed`
  // bytes), the processes then in `state`.
  void Answer(int32_t result = 0, double ms = 5, uint64_t freed = 0,
              int32_t state = cuda_checkpoint::kRunning) {
    std::vector<CheckpointReply> replies;
    for (uint64_t seq = service.done + 1; seq <= service.requests.size(); ++seq) {
      CheckpointReply r{};
      r.seq = seq;
      r.pid = service.requests[seq - 1].pid;
      r.result = result;
      r.state = state;
      r.ms = ms;
      if (service.requests[seq - 1].op == CheckpointOp::kCheckpoint) r.freed_bytes = freed;
      replies.push_back(r);
    }
    service.done = service.requests.size();
    engine.OnReplies(replies, true);
  }
  // The helper refuses the restore asked, leaving the process checkpointed, then the loop runs.
  void RefuseRestoreIntact() {
    Answer(cuda_checkpoint::kErrorInvalidValue, 5, 0, cuda_checkpoint::kCheckpointed);
    Loop();
  }
  // What Daemon::Loop runs after every event, in its order.
  void Loop() {
    host.Apply(arbiter.Tick(clock.Now()));
    sharing.Tick(table.GpuKeys());
    engine.Tick();
  }
  size_t Grants(ConnId conn) const {
    size_t n = 0;
    for (const LeaseAction& a : host.applied)
      n += a.conn == conn && a.kind == LeaseAction::Kind::kGrant;
    return n;
  }
  uint64_t Epoch(ConnId conn) const {
    for (auto it = host.applied.rbegin(); it != host.applied.rend(); ++it) {
      if (it->conn == conn && it->kind == LeaseAction::Kind::kGrant) return it->epoch;
    }
    return 0;
  }
};

TEST_CASE("suspend drains the lease, checkpoints the processes, then stops them") {
  Fixture f;
  ActiveJob& job = f.Job(1, 10);
  f.host.Apply(f.arbiter.Request(11, kGpu, f.clock.Now()));
  REQUIRE(f.arbiter.ConnHolds(11));

  REQUIRE(f.engine.Suspend(1).ok());
  CHECK(f.host.saved.back().state == JobState::kSuspended);
  CHECK(job.suspension == ActiveJob::Suspension::kDraining);
  CHECK(f.helper_starts == 1);  // ahead of the checkpoint
  f.Loop();
  CHECK(f.service.requests.empty());  // its DROP is not acknowledged yet

  f.host.Apply(f.arbiter.Released(11, kGpu, f.Epoch(11), f.clock.Now()));
  f.Loop();
  REQUIRE(f.service.requests.size() == 1);
  CHECK(f.service.requests[0].op == CheckpointOp::kCheckpoint);
  CHECK(f.service.requests[0].pid == 100);
  CHECK(job.suspension == ActiveJob::Suspension::kCheckpointing);
  CHECK(f.host.signals.empty());  // not stopped before its checkpoint is done

  f.Answer();
  f.Loop();
  CHECK(job.suspension == ActiveJob::Suspension::kStopped);
  CHECK(f.host.signals == std::vector<std::pair<JobId, int>>{{1, SIGSTOP}});
  CHECK(job.checkpoints == 1);
  CHECK_FALSE(f.arbiter.ConnHolds(11));  // suspended: nobody asked on its behalf
}

TEST_CASE(
    "suspend and resume refuse jobs not in their state, and keep it when the row is not "
    "saved") {
  Fixture f;
  ActiveJob& job = f.Job(1, 10);
  CHECK(f.engine.Suspend(9).message() == "job 9 is not running");
  CHECK(f.engine.Resume(1, "").message() == "job 1 is not SUSPENDED");
  f.host.save_fails = true;
  CHECK(f.engine.Suspend(1).message() == "disk full");
  CHECK(job.suspension == ActiveJob::Suspension::kNone);
  CHECK(job.record.state == JobState::kRunning);
  f.host.save_fails = false;
  REQUIRE(f.engine.Suspend(1).ok());
  CHECK(f.engine.Suspend(1).message() == "job 1 is already SUSPENDED");
}

TEST_CASE(
    "resume continues the processes and asks the lease for them: the grant waits for the "
    "restore") {
  Fixture f;
  ActiveJob& job = f.Job(1, 10);
  REQUIRE(f.engine.Suspend(1).ok());
  f.Loop();
  f.Answer();
  f.Loop();
  REQUIRE(job.suspension == ActiveJob::Suspension::kStopped);

  REQUIRE(f.engine.Resume(1, "").ok());
  CHECK(f.host.saved.back().state == JobState::kRunning);
  CHECK(f.host.signals.back() == std::pair<JobId, int>{1, SIGCONT});
  CHECK(job.suspension == ActiveJob::Suspension::kNone);
  f.Loop();
  // Granted on its behalf, held back until the helper restored it.
  REQUIRE(f.Grants(11) == 1);
  CHECK(f.host.grants.empty());
  REQUIRE(f.service.requests.size() == 2);
  CHECK(f.service.requests[1].op == CheckpointOp::kRestore);
  f.Answer();
  f.Loop();
  CHECK(f.host.grants == std::vector<std::pair<ConnId, std::string>>{{11, "GRANT"}});
  CHECK(job.restores == 1);
  CHECK_FALSE(f.ledger.IsCheckpointed(11));
}

TEST_CASE("a checkpoint for room asks the lease back on the process's behalf once done") {
  Fixture f;
  f.Job(1, 10);
  REQUIRE(f.engine.Checkpoint(11, "room"));
  CHECK(f.ledger.IsCheckpointed(11));
  CHECK(f.engine.Checkpoint(11, "again"));  // already: nothing new asked
  CHECK(f.service.requests.size() == 1);
  f.Answer();
  f.Loop();
  CHECK(f.Grants(11) == 1);  // it cannot ask itself while checkpointed
}

TEST_CASE("no checkpoint of a process that exits, is gone, or whose job ended") {
  Fixture f;
  f.Job(1, 10);
  f.Job(2, 10).ended = true;
  f.Job(3, 10);
  f.table.conns.at(11)->exiting = true;
  f.table.conns.at(31)->closing = true;
  CHECK_FALSE(f.engine.Checkpoint(11, "room"));
  CHECK_FALSE(f.engine.Checkpoint(21, "room"));
  CHECK_FALSE(f.engine.Checkpoint(31, "room"));
  CHECK(f.service.requests.empty());
  f.service.refuse = true;
  f.table.conns.at(11)->exiting = false;
  CHECK_FALSE(f.engine.Checkpoint(11, "room"));
}

TEST_CASE(
    "a failed checkpoint leaves the memory on the GPU; a driver without checkpoints ends "
    "them") {
  Fixture f;
  f.Job(1, 10);
  f.Job(2, 10);
  REQUIRE(f.engine.Checkpoint(11, "room"));
  f.Answer(999);
  CHECK_FALSE(f.ledger.IsCheckpointed(11));
  CHECK(f.ledger.checkpoint_available());
  REQUIRE(f.engine.Checkpoint(21, "room"));
  f.Answer(cuda_checkpoint::kErrorNotSupported);
  CHECK_FALSE(f.ledger.checkpoint_available());
}

TEST_CASE("a restore without room gives the grant back and asks again; a failed one kills") {
  Fixture f;
  f.Job(1, 10);
  REQUIRE(f.engine.Checkpoint(11, "room"));
  CHECK(f.service.requests[0].gpu == kGpu);  // what it frees there is measured
  const uint64_t reported = 10 * kGiB + f.ledger.options().context_bytes;
  f.Answer(0, 5, reported + 20 * kGiB);  // it freed 20 GiB more than its reports say
  f.Loop();
  REQUIRE(f.Grants(11) == 1);
  REQUIRE(f.service.requests.size() == 2);  // the restore its grant waits for
  CHECK(f.service.requests[1].need_bytes == reported + 20 * kGiB);
  f.Answer(kNoRoom);
  f.Loop();
  CHECK(f.ledger.IsCheckpointed(11));
  CHECK(f.Grants(11) == 2);  // released and granted again, waiting for a new restore
  REQUIRE(f.service.requests.size() == 3);
  CHECK(f.service.requests[2].op == CheckpointOp::kRestore);
  CHECK(f.service.requests[2].need_bytes == reported);  // no room came for the footprint
  f.Answer(700);
  CHECK(f.host.killed == std::vector<pid_t>{100});
  CHECK(f.host.grants.empty());
}

TEST_CASE("a restore that fails with the process intact asks again, three times, then kills") {
  Fixture f;
  f.Job(1, 10);
  REQUIRE(f.engine.Checkpoint(11, "room"));
  f.Answer();
  f.Loop();
  REQUIRE(f.service.requests.size() == 2);  // the restore its grant waits for
  for (int attempt = 1; attempt <= 3; ++attempt) {
    f.RefuseRestoreIntact();
    CHECK(f.host.killed.empty());
    CHECK(f.ledger.IsCheckpointed(11));
    CHECK(f.Grants(11) == static_cast<size_t>(attempt + 1));  // given back, granted again
    REQUIRE(f.service.requests.size() == static_cast<size_t>(attempt + 2));
    CHECK(f.service.requests.back().op == CheckpointOp::kRestore);
  }
  f.Answer(cuda_checkpoint::kErrorInvalidValue, 5, 0, cuda_checkpoint::kCheckpointed);
  CHECK(f.host.killed == std::vector<pid_t>{100});
}

TEST_CASE("a restore that succeeds after failures starts the count again") {
  Fixture f;
  f.Job(1, 10);
  for (int round = 0; round < 2; ++round) {
    REQUIRE(f.engine.Checkpoint(11, "room"));
    f.Answer();
    f.Loop();
    for (int attempt = 0; attempt < 3; ++attempt) f.RefuseRestoreIntact();
    f.Answer();  // restored
    f.Loop();
    CHECK_FALSE(f.ledger.IsCheckpointed(11));
  }
  CHECK(f.host.killed.empty());
}

TEST_CASE("resume --gpu moves a suspended job that sees every GPU onto the other GPU") {
  Fixture f;
  f.gpu_count = 2;
  ActiveJob& narrow = f.Job(1, 10, "0");
  ActiveJob& job = f.Job(2, 10, "0,1");
  REQUIRE(f.engine.Suspend(1).ok());
  REQUIRE(f.engine.Suspend(2).ok());
  CHECK(f.engine.Resume(2, "1").message().find("still being checkpointed") != std::string::npos);
  f.Loop();
  f.Answer();
  f.Loop();
  REQUIRE(narrow.suspension == ActiveJob::Suspension::kStopped);
  REQUIRE(job.suspension == ActiveJob::Suspension::kStopped);
  CHECK(f.engine.Resume(1, "1").message().find("sees 1 of the 2 GPUs") != std::string::npos);
  CHECK(f.engine.Resume(2, "7").ok() == false);

  REQUIRE(f.engine.Resume(2, "1").ok());
  CHECK(job.moves == 1);
  CHECK(f.ledger.GpusOf(21) == std::vector<GpuKey>{kGpu1});
  CHECK(f.table.conns.at(21)->moved.at(kGpu) == kGpu1);
  CHECK(f.table.KnowsGpu(kGpu1));
  REQUIRE(f.service.requests.back().op == CheckpointOp::kRestore);
  CHECK(f.service.requests.back().gpu == kGpu1);
  CHECK(f.service.requests.back().from_gpu == kGpu);
}

// Two H100s as NVML names them; job 1 (60 GiB) holds GPU 0; job 2 (60 GiB, GPUs `slot`) was
// checkpointed for room and waits behind it.
void WaitBehindHolder(Fixture& f, const std::string& slot) {
  f.gpu_count = 2;
  GpuSample g0, g1;
  g0.index = 0;
  g0.uuid = kGpu;
  g1.index = 1;
  g1.uuid = kGpu1;
  g0.name = g1.name = "NVIDIA H100 80GB HBM3";
  g0.memory_total = g1.memory_total = static_cast<int64_t>(80 * kGiB);
  f.samples = {g0, g1};
  f.Job(1, 60, "0,1");
  f.Job(2, 60, slot);
  f.host.Apply(f.arbiter.Request(11, kGpu, f.clock.Now()));
  REQUIRE(f.arbiter.ConnHolds(11));
  REQUIRE(f.engine.Checkpoint(21, "room"));
  f.Answer();
  REQUIRE_FALSE(f.arbiter.ConnHolds(21));
}

TEST_CASE(
    "rebalance moves a process waiting behind another job to the idle GPU only when its job "
    "sees every GPU") {
  for (const auto& [slot, moves] : {std::pair{"0,1", true}, std::pair{"0", false}}) {
    CAPTURE(slot);
    Fixture f;
    WaitBehindHolder(f, slot);
    f.Loop();
    CHECK(f.ledger.GpusOf(21) == std::vector<GpuKey>{moves ? kGpu1 : kGpu});
    CHECK(f.table.jobs.at(2)->moves == (moves ? 1u : 0u));
    CHECK(f.Grants(21) == (moves ? 1u : 0u));  // asked there on its behalf
    CHECK(f.ledger.GpusOf(11) == std::vector<GpuKey>{kGpu});
  }
}

}  // namespace
}  // namespace gshare::unit_checkpoint_engine
