// JobLifecycle: a submitted job stored RUNNING before its supervisor starts, a `gshare run`
// told of its admission, cancel of a pending and of an active job (SIGTERM, then SIGKILL after
// --kill-after), requeue keeping the run in the history, the re-adopted jobs of a restart (an end
// file read, a supervisor gone before or after the job started) and forgetting an ended job;
// against a real SQLite store, real processes, the parts as the daemon wires them and a manual
// clock.
#include "daemon/job_lifecycle.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/process_identity.h"
#include "daemon/child_processes.h"
#include "daemon/job_records.h"
#include "daemon/memory_parts.h"
#include "daemon/table_parts.h"
#include "ipc/frame_io.h"
#include "ipc/job_end.h"
#include "temp_dir.h"

namespace gshare::unit_job_lifecycle {
namespace {

using namespace unit_memory_parts;  // NOLINT: the shared parts of these tests

struct Quiet : MemoryCoordinator::Host, IdleStager::Host {
  void SendEvictions(const GpuKey&, const MemoryLedger::Plan&) override {}
  uint64_t LastCheckpointSent() const override { return 0; }
  uid_t JobOwner(JobId) const override { return 0; }
  void SendStage(ConnId, const GpuKey&, uint64_t) override {}
};

using unit_child_processes::EndSignal;
using unit_child_processes::GroupLeader;

struct Fixture : MemoryParts<Quiet> {
  TempDir dir;
  std::unique_ptr<JobStore> store;
  DaemonOptions options;
  JobTable table;
  JobProcesses processes{options, table};
  int gpu_count = 1;
  JobPlacement placement{JobPlacement::Options{[this] { return gpu_count; }}, table, ledger,
                         arbiter};
  IdleStager staging{Millis(0), arbiter, ledger, clock, memory_host};
  TimelineRecorder timeline{TimelineRecorder::Options{false}, clock,
                            [](JobId) { return uint32_t{0}; }};
  std::unique_ptr<BatchQueue> queue;
  std::vector<std::pair<ConnId, Frame>> sent;
  std::unique_ptr<JobLifecycle> lifecycle;

  Fixture() {
    store = OpenStoreOrFail(dir.path() + "/s.db");
    options.state_dir = dir.path();
    options.socket_path = dir.path() + "/gshare.sock";
    // The supervisor: a script that outlives each case (5 s) unless it is killed.
    options.self_exe = dir.path() + "/fake-gshare";
    std::ofstream(options.self_exe) << "#!/bin/sh\nexec sleep 5\n";
    REQUIRE(chmod(options.self_exe.c_str(), 0700) == 0);
    options.config.queue.max_running = 1;
    MakeLifecycle();
  }
  ~Fixture() {
    for (const auto& [id, job] : table.jobs) {
      if (job->record.runner_pid) {
        kill(*job->record.runner_pid, SIGKILL);
        waitpid(*job->record.runner_pid, nullptr, 0);
      }
    }
  }
  // A new queue and lifecycle on the same store and table: the daemon's restart.
  void MakeLifecycle() {
    queue = std::make_unique<BatchQueue>(*store, clock,
                                         [this](int64_t id) { return table.ActiveState(id); });
    lifecycle = std::make_unique<JobLifecycle>(
        JobLifecycle::Parts{options, table, *queue, *store, processes, placement, arbiter, ledger,
                            memory, staging, timeline, clock},
        [this] { return gpu_count; },
        [this](ConnId conn, std::string_view frame) {
          FrameBuffer buffer(1 << 20);
          buffer.Append(frame.data(), frame.size());
          Result<std::optional<Frame>> f = buffer.Next();
          REQUIRE(f.ok());
          REQUIRE(f.value());
          sent.emplace_back(conn, *f.value());
          return true;
        });
  }
  JobRecord Stored(int64_t id) {
    auto row = store->Get(id);
    REQUIRE(row.ok());
    REQUIRE(row.value());
    return *row.value();
  }
};

TEST_CASE("admission stores a submitted job RUNNING, starts its supervisor, and tells a run") {
  Fixture f;
  const int64_t a = StoreAndQueue(*f.store, *f.queue, SubmittedJob(JobState::kPending));
  const int64_t c = StoreAndQueue(*f.store, *f.queue, SubmittedJob(JobState::kPending));
  JobRecord run = SubmittedJob(JobState::kPending);
  run.kind = "run";
  const int64_t b = StoreAndQueue(*f.store, *f.queue, run);
  unit_table_parts::AddConn(f.table, 7, static_cast<JobId>(b), Connection::Kind::kRunner);

  f.lifecycle->Tick(f.clock.Now());
  JobRecord ra = f.Stored(a);
  CHECK(ra.state == JobState::kRunning);
  CHECK(ra.slot == "0");
  REQUIRE(ra.runner_pid);
  CHECK(ra.runner_start == ProcessStartTime(*ra.runner_pid));
  CHECK(f.table.jobs.at(a)->orphan);      // until its supervisor attaches
  CHECK(f.queue->Pending(c) != nullptr);  // max_running 1
  // A `gshare run` is not bound by max_running; its client hears of it.
  CHECK(f.queue->Pending(b) == nullptr);
  CHECK(f.table.jobs.at(b)->record.slot == "0");
  REQUIRE(f.sent.size() == 1);
  CHECK(f.sent[0].first == 7);
  CHECK(f.sent[0].second.type == proto::MsgType::kRunAdmitted);

  f.lifecycle->Started(*f.table.jobs.at(a), 4242);
  CHECK(f.Stored(a).pid == 4242);
  f.lifecycle->Finish(a, JobState::kCompleted, 0, std::nullopt, "");
  f.lifecycle->ForgetIfDone(a);
  CHECK(f.table.jobs.count(a) == 0);
  CHECK(f.Stored(a).state == JobState::kCompleted);
  // A `gshare run` job is forgotten only once its runner's connection closes.
  f.lifecycle->Finish(b, JobState::kCompleted, 0, std::nullopt, "");
  f.lifecycle->ForgetIfDone(b);
  CHECK(f.table.jobs.count(b) == 1);
  f.table.conns.at(7)->closing = true;
  f.lifecycle->ForgetIfDone(b);
  CHECK(f.table.jobs.count(b) == 0);

  f.lifecycle->Tick(f.clock.Now());
  CHECK(f.queue->Pending(c) == nullptr);
  CHECK(f.Stored(c).state == JobState::kRunning);
}

TEST_CASE("a cancelled pending run ends at once and its waiting client is told") {
  Fixture f;
  JobRecord run = SubmittedJob(JobState::kPending);
  run.kind = "run";
  run.held = true;
  const int64_t id = StoreAndQueue(*f.store, *f.queue, run);
  unit_table_parts::AddConn(f.table, 9, static_cast<JobId>(id), Connection::Kind::kRunner);
  REQUIRE(f.lifecycle->Cancel(id, false).ok());
  CHECK(f.Stored(id).state == JobState::kCancelled);
  CHECK(f.queue->Pending(id) == nullptr);
  REQUIRE(f.sent.size() == 1);
  CHECK(f.sent[0].first == 9);
  CHECK(f.sent[0].second.type == proto::MsgType::kReply);
  CHECK(f.sent[0].second.payload.find("was cancelled") != std::string::npos);
  CHECK(f.lifecycle->Cancel(id, false).message() ==
        "job " + std::to_string(id) + " is already CANCELLED");
  CHECK(f.lifecycle->Cancel(999, false).message() == "no job 999");
}

TEST_CASE("cancel of an active job: SIGTERM now, SIGKILL once --kill-after has passed") {
  Fixture f;
  JobRecord r = SubmittedJob(JobState::kPending);
  r.kill_after_ms = 2000;
  const int64_t id = StoreAndQueue(*f.store, *f.queue, r);
  f.lifecycle->Tick(f.clock.Now());
  const pid_t job = GroupLeader(/*ignore_term=*/true);
  f.lifecycle->Started(*f.table.jobs.at(id), job);
  REQUIRE(f.lifecycle->Cancel(id, false).ok());
  CHECK(f.Stored(id).end_request == "cancel");
  CHECK(f.lifecycle->Deadline() <= f.clock.Now() + Millis(2000));
  f.clock.Advance(Millis(1999));
  f.lifecycle->Tick(f.clock.Now());
  CHECK(ProcessStartTime(job));  // it ignored the SIGTERM and is not killed yet (no zombie)
  f.clock.Advance(Millis(1));
  f.lifecycle->Tick(f.clock.Now());
  CHECK(EndSignal(job, std::chrono::seconds(2)) == SIGKILL);
  JobEnd end;
  end.signal = SIGKILL;
  f.lifecycle->End(id, end);
  CHECK(f.Stored(id).state == JobState::kCancelled);
  CHECK(f.Stored(id).signal == SIGKILL);
}

TEST_CASE("a requeued job is PENDING again with its run kept; a Slurm step is not cancelled") {
  Fixture f;
  const int64_t id = StoreAndQueue(*f.store, *f.queue, SubmittedJob(JobState::kPending));
  f.lifecycle->Tick(f.clock.Now());
  REQUIRE(f.lifecycle->Cancel(id, true).ok());
  JobEnd end;
  end.exit_code = 0;
  f.lifecycle->End(id, end);
  JobRecord again = f.Stored(id);
  CHECK(again.state == JobState::kPending);
  CHECK(again.restarts == 1);
  CHECK(f.queue->Pending(id) != nullptr);
  CHECK(f.lifecycle->Cancel(id, true).message() ==
        "job " + std::to_string(id) + " is already pending");

  ActiveJob& step = unit_table_parts::AddJob(f.table, 77, 0);
  step.record.kind = "slurm";
  step.record.slurm_job_id = 12;
  step.record.slurm_step = "0";
  CHECK(f.lifecycle->Cancel(77, false).message() ==
        "job 77 is Slurm step 12.0: Slurm ends it (scancel 12)");
}

TEST_CASE("after a restart: an end file is read, a supervisor gone early requeues, late is LOST") {
  Fixture f;
  JobRecord base = SubmittedJob(JobState::kRunning);
  base.runner_pid = 999999;  // no such process: its supervisor is gone
  base.runner_start = 1;
  auto insert = [&f](JobRecord r) {
    Result<int64_t> id = f.store->Insert(r);
    REQUIRE(id.ok());
    return id.value();
  };
  const int64_t reported = insert(base);
  const int64_t never_started = insert(base);
  const int64_t started = insert(base);
  JobEnd end;
  end.exit_code = 3;
  REQUIRE(WriteJobEnd(JobEndPath(f.dir.path(), reported), end, reported).ok());
  REQUIRE(WriteJobStart(JobStartPath(f.dir.path(), started)).ok());
  REQUIRE(f.queue->SetPaused(true).ok());  // what is queued again stays pending here
  f.lifecycle->Recover();
  CHECK(f.Stored(reported).state == JobState::kFailed);
  CHECK(f.Stored(reported).exit_code == 3);
  CHECK(access(JobEndPath(f.dir.path(), reported).c_str(), F_OK) != 0);
  CHECK(f.Stored(never_started).state == JobState::kPending);
  CHECK(f.queue->Pending(never_started) != nullptr);
  CHECK(f.Stored(started).state == JobState::kLost);
  CHECK(f.table.jobs.empty());  // all forgotten
}

}  // namespace
}  // namespace gshare::unit_job_lifecycle
