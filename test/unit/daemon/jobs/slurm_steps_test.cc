// SlurmSteps: a step's tasks join one job of the step (kind slurm, RUNNING, its slurmstepd the
// runner), another user's task and a task outside any step are refused; root's Prolog sets the
// steps' priority by partition (the arbiter follows; RequestRouter refuses anyone else's); the
// Epilog ends the job's steps, dropping their processes' connections; against a real store and the
// parts as the daemon wires them, the process tree given by the test.
#include "daemon/jobs/slurm_steps.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/process_identity.h"
#include "daemon/lifecycle_parts.h"
#include "daemon/table_parts.h"

namespace gshare::unit_slurm_steps {
namespace {

using json = nlohmann::json;

constexpr uint32_t kAlice = 5001, kBob = 5002;
constexpr pid_t kTask = 700, kOtherTask = 701, kNoStep = 702;

struct Fixture : unit_lifecycle_parts::ControlParts {
  // This test process stands for the step's slurmstepd: alive, with a start time.
  SlurmStep step{12, "0", getpid(), ProcessStartTime(getpid()).value_or(0)};
  SlurmSteps slurm{*lifecycle, control, [this] { return gpu_count; },
                   [this](pid_t pid) -> std::optional<SlurmStep> {
                     if (pid == kNoStep) return std::nullopt;
                     return step;
                   },
                   transport};

  Fixture() {
    options.config.slurm.partition_priority["interactive"] = 10;
    options.config.scheduler.quantum = Millis(1000);
  }
  // kSlurmStep from process `pid` of `uid`; its reply.
  json Join(uint32_t uid, pid_t pid, const std::string& gpus = "0") {
    slurm.OnStep(Connect(uid, pid), SlurmStepRequest{gpus, ""}.ToJson());
    return replies.back();
  }
  json Prolog(uint32_t from, const std::string& action, const std::string& partition = "") {
    SlurmJobRequest r{action, 12, kAlice, partition, ""};
    slurm.OnJob(Connect(from, 1), r.ToJson());
    return replies.back();
  }
};

TEST_CASE("a step's tasks join one job of the step; others' tasks and strays are refused") {
  Fixture f;
  json first = f.Join(kAlice, kTask);
  REQUIRE(first["ok"] == true);
  const int64_t id = first["job_id"];
  const JobRecord& r = f.table.jobs.at(static_cast<JobId>(id))->record;
  CHECK(r.kind == JobKind::kSlurm);
  CHECK(r.state == JobState::kRunning);
  CHECK(r.name == "12.0");
  CHECK(r.runner_pid == getpid());
  CHECK(f.table.jobs.at(static_cast<JobId>(id))->orphan);  // its slurmstepd is polled
  CHECK(f.Stored(id).slurm_job_id == 12);

  json second = f.Join(kAlice, kOtherTask);
  CHECK(second["job_id"] == id);
  CHECK(second["token"] == first["token"]);
  CHECK(f.Join(kBob, kOtherTask)["error"] ==
        std::string(kPermissionDenied) + "Slurm step 12.0 is another user's");
  CHECK(f.Join(kAlice, kNoStep)["error"] ==
        "pid 702 is no task of a Slurm job step (no root "
        "slurmstepd above it)");
  f.step.step = "1";
  CHECK(f.Join(kAlice, kTask, "")["error"] == "Slurm step 12.1 has no GPU");
  CHECK(f.Join(kAlice, kTask, "5")["ok"] == false);  // one GPU here
}

TEST_CASE("root's Prolog sets the steps' priority; its Epilog ends them and drops their shims") {
  Fixture f;
  const int64_t id = f.Join(kAlice, kTask)["job_id"];
  ActiveJob& job = *f.table.jobs.at(static_cast<JobId>(id));
  CHECK(job.record.priority == 0);
  CHECK(f.Prolog(0, "begin", "interactive")["ok"] == true);
  CHECK(job.record.priority == 10);
  CHECK(f.arbiter.PriorityOf(static_cast<JobId>(id)) == 10);
  // A step that joins after the Prolog spoke starts at its priority.
  f.step.step = "batch";
  const int64_t batch = f.Join(kAlice, kTask)["job_id"];
  CHECK(f.table.jobs.at(static_cast<JobId>(batch))->record.priority == 10);

  unit_table_parts::AddConn(f.table, 900, static_cast<JobId>(id), Connection::Kind::kShim, kTask);
  job.shims.insert(900);
  json ended = f.Prolog(0, "end");
  CHECK(ended["ended"] == json{id, batch});
  CHECK(f.drops == std::vector<std::string>{"its Slurm job ended"});
  CHECK(f.Stored(id).state == JobState::kCompleted);
  CHECK(f.Stored(batch).state == JobState::kCompleted);
  CHECK(f.table.jobs.count(static_cast<JobId>(batch)) == 0);  // forgotten
}

}  // namespace
}  // namespace gshare::unit_slurm_steps
