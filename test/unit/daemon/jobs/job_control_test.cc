// JobControl: who may steer a job (its owner, an admin; a priority above the requester's
// ceiling), an array's id standing for the tasks an action applies to, hold and release,
// update with its dependency cycle refused, set-priority of a pending and of an active job
// (the arbiter follows), signals to a running job's group, suspend and resume handed to the
// checkpoint engine; against a real store, real processes and the parts as the daemon wires
// them.
#include "daemon/jobs/job_control.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "daemon/child_processes.h"
#include "daemon/lifecycle_parts.h"
#include "daemon/table_parts.h"

namespace gshare::unit_job_control {
namespace {

using unit_child_processes::EndSignal;
using unit_child_processes::GroupLeader;

constexpr uint32_t kAdmin = 4000, kAlice = 5001, kBob = 5002;

struct Fixture : unit_lifecycle_parts::ControlParts {
  Fixture() {
    AccessRules rules;
    rules.daemon_uid = kAdmin;
    rules.max_priority = 100;
    access.SetRules(rules);
  }
  int64_t Queue(uint32_t uid, const std::string& dependency = "") {
    JobRecord r = SubmittedJob(JobState::kPending);
    r.uid = uid;
    r.held = true;  // none starts by itself
    r.dependency = dependency;
    return StoreAndQueue(*store, *queue, r);
  }
  // The one outcome of `action` on `ids` by `uid`: "" when done, else its error.
  std::vector<std::string> Do(uint32_t uid, const std::string& action, std::vector<int64_t> ids,
                              int value = 0) {
    Connection c;
    c.uid = uid;
    JobControlRequest request;
    request.action = action;
    request.ids = std::move(ids);
    request.priority = value;
    request.signal = value;
    std::vector<std::string> errors;
    for (const JobControlReply::Outcome& o : control.Handle(c, request).results) {
      errors.push_back(o.error);
    }
    return errors;
  }
};

TEST_CASE("a job is steered by its owner and admins; a priority above the ceiling is refused") {
  Fixture f;
  const int64_t a = f.Queue(kAlice);
  std::vector<std::string> bob = f.Do(kBob, "release", {a});
  REQUIRE(bob.size() == 1);
  CHECK(bob[0].rfind(kPermissionDenied, 0) == 0);
  CHECK(f.queue->Pending(a)->held);
  CHECK(f.Do(kAlice, "set-priority", {a}, 101)[0].rfind(kPermissionDenied, 0) == 0);
  CHECK(f.Do(kAlice, "set-priority", {a}, 100) == std::vector<std::string>{""});
  CHECK(f.Stored(a).priority == 100);
  CHECK(f.Do(kAdmin, "set-priority", {a}, 500) == std::vector<std::string>{""});
  CHECK(f.queue->Pending(a)->priority == 500);
  CHECK(f.Do(kAlice, "release", {a}) == std::vector<std::string>{""});
  CHECK_FALSE(f.Stored(a).held);
  CHECK(f.Do(kAlice, "cancel", {999}) == std::vector<std::string>{"no job 999"});
}

TEST_CASE("an array's id stands for its pending tasks in hold; with none running, for itself") {
  Fixture f;
  std::vector<JobRecord> tasks;
  for (int64_t task : {1, 2, 3}) {
    JobRecord& t = tasks.emplace_back(SubmittedJob(JobState::kPending));
    t.uid = kAlice;
    t.array_task_id = task;
    t.array_task_count = 3;
  }
  REQUIRE(f.store->InsertArray(&tasks, JobPayload{}).ok());
  for (JobRecord& t : tasks) f.queue->Add(t);
  const int64_t array = tasks.front().array_job_id;
  CHECK(f.Do(kAlice, "hold", {array}) == std::vector<std::string>{"", "", ""});
  for (const JobRecord& t : tasks) CHECK(f.Stored(t.id).held);
  // No task runs: the id stays itself, which the first task's row carries.
  CHECK(f.Do(kAlice, "signal", {array}, SIGUSR1) ==
        std::vector<std::string>{"job " + std::to_string(array) + " is not running"});
}

TEST_CASE("update: a dependency that would wait for itself is refused, others are saved") {
  Fixture f;
  const int64_t a = f.Queue(kAlice);
  const int64_t b = f.Queue(kAlice, "afterok:" + std::to_string(a));
  const int64_t c = f.Queue(kAlice, "afterany:" + std::to_string(b));
  Connection alice;
  alice.uid = kAlice;
  JobControlRequest request;
  request.action = "update";
  request.ids = {a};
  request.update.dependency = "afterok:" + std::to_string(c);
  std::vector<JobControlReply::Outcome> out = f.control.Handle(alice, request).results;
  REQUIRE(out.size() == 1);
  CHECK(out[0].error == "a dependency of job " + std::to_string(a) + " on job " +
                            std::to_string(c) + " would wait for itself");
  CHECK(f.Stored(a).dependency.empty());
  request.update.dependency.reset();
  request.update.name = "renamed";
  request.update.time_limit_ms = 60000;
  CHECK(f.control.Handle(alice, request).results[0].error.empty());
  CHECK(f.Stored(a).name == "renamed");
  CHECK(f.queue->Pending(a)->time_limit_ms == 60000);
}

TEST_CASE("a running job: its priority reaches the arbiter, signals its group, checkpoints") {
  Fixture f;
  JobRecord stored = SubmittedJob(JobState::kRunning);
  stored.uid = kAlice;
  stored.slot = "0";
  Result<int64_t> id = f.store->Insert(stored);
  REQUIRE(id.ok());
  const int64_t j = id.value();
  stored.id = j;
  auto active = std::make_unique<ActiveJob>();
  active->record = stored;
  ActiveJob& job = *active;
  f.table.jobs[static_cast<JobId>(j)] = std::move(active);
  f.arbiter.AddJob(static_cast<JobId>(j), 0, Millis(0), kAlice);
  const pid_t leader = GroupLeader();
  job.record.pid = leader;
  const std::string name = "job " + std::to_string(j);

  CHECK(f.Do(kAlice, "set-priority", {j}, 50) == std::vector<std::string>{""});
  CHECK(f.arbiter.PriorityOf(static_cast<JobId>(j)) == 50);
  CHECK(f.Stored(j).priority == 50);
  CHECK(f.Do(kAlice, "hold", {j}) == std::vector<std::string>{name + " is RUNNING, not pending"});
  CHECK(f.Do(kAlice, "suspend", {j}) == std::vector<std::string>{""});
  JobControlRequest resume;
  resume.action = "resume";
  resume.ids = {j};
  resume.gpu = "1";
  Connection alice;
  alice.uid = kAlice;
  CHECK(f.control.Handle(alice, resume).results[0].error.empty());
  CHECK(f.checkpoints ==
        std::vector<std::pair<int64_t, std::string>>{{j, "suspend"}, {j, "resume 1"}});
  CHECK(f.Do(kAlice, "signal", {j}, SIGUSR1) == std::vector<std::string>{""});
  CHECK(EndSignal(leader) == SIGUSR1);
  CHECK(f.Do(kAlice, "signal", {j}, SIGUSR1) == std::vector<std::string>{name + " is not running"});
}

}  // namespace
}  // namespace gshare::unit_job_control
