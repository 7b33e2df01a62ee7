// JobLifecycle: a submitted job stored RUNNING before its supervisor starts, a `gshare run`
// told of its admission, cancel of a pending and of an active job (SIGTERM, then SIGKILL after
// --kill-after), requeue keeping the run in the history, the re-adopted jobs of a restart (an end
// file read, a supervisor gone before or after the job started) and forgetting an ended job;
// against a real SQLite store, real processes, the parts as the daemon wires them and a manual
// clock.
#include "daemon/jobs/job_lifecycle.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>

#include "base/process_identity.h"
#include "daemon/child_processes.h"
#include "daemon/lifecycle_parts.h"
#include "daemon/table_parts.h"
#include "ipc/job_end.h"

namespace gshare::unit_job_lifecycle {
namespace {

using unit_child_processes::EndSignal;
using unit_child_processes::GroupLeader;
using Fixture = unit_lifecycle_parts::LifecycleParts;

TEST_CASE("admission stores a submitted job RUNNING, starts its supervisor, and tells a run") {
  Fixture f;
  const int64_t a = StoreAndQueue(*f.store, *f.queue, SubmittedJob(JobState::kPending));
  const int64_t c = StoreAndQueue(*f.store, *f.queue, SubmittedJob(JobState::kPending));
  JobRecord run = SubmittedJob(JobState::kPending);
  run.kind = JobKind::kRun;
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
  run.kind = JobKind::kRun;
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
  step.record.kind = JobKind::kSlurm;
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
