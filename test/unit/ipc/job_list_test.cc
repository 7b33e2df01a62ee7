// Issue 21: users of the system daemon read jobs through it (kListJobs).
#include "ipc/job_list.h"

#include <doctest/doctest.h>

#include "ipc/job_json.h"
#include "model/every_field.h"
#include "model/job_fields.h"

namespace gshare::unit_job_list {
namespace {

TEST_CASE("a list request survives the wire") {
  ListJobsRequest sent;
  sent.filter.states = {JobState::kPending, JobState::kRunning};
  sent.filter.name = "train";
  sent.filter.uid = 1001;
  sent.filter.order = ListFilter::Order::kQueueOrder;
  sent.filter.limit = 5;
  Result<ListJobsRequest> got = ListJobsRequest::Parse(sent.ToJson());
  REQUIRE(got.ok());
  CHECK_FALSE(got->job_id);
  CHECK(got->filter.states == sent.filter.states);
  CHECK(got->filter.name == "train");
  CHECK(got->filter.uid == 1001u);
  CHECK(got->filter.order == ListFilter::Order::kQueueOrder);
  CHECK(got->filter.limit == 5);
  ListJobsRequest one;
  one.job_id = 7;
  Result<ListJobsRequest> got_one = ListJobsRequest::Parse(one.ToJson());
  REQUIRE(got_one.ok());
  CHECK(got_one->job_id == 7);
}

TEST_CASE("bad list requests are refused") {
  CHECK_FALSE(ListJobsRequest::Parse({{"job_id", 0}}).ok());
  CHECK_FALSE(ListJobsRequest::Parse({{"job_id", "7"}}).ok());
  CHECK_FALSE(ListJobsRequest::Parse({{"states", {"SLEEPING"}}}).ok());
  CHECK_FALSE(ListJobsRequest::Parse({{"order", "random"}}).ok());
  CHECK_FALSE(ListJobsRequest::Parse({{"limit", -1}}).ok());
  CHECK_FALSE(ListJobsRequest::Parse({{"uid", "root"}}).ok());
}

TEST_CASE("a job read back from its JSON is the job") {
  JobRecord r;
  r.id = 12;
  r.name = "train";
  r.argv = {"python3", "train.py"};
  r.cwd = "/home/a";
  r.uid = 1001;
  r.priority = 5;
  r.state = JobState::kFailed;
  r.reason = "why";
  r.submit_time = 1.7e9;
  r.start_time = 1.7e9 + 1;
  r.end_time = 1.7e9 + 2;
  r.exit_code = 3;
  r.output = "/home/a/%j.out";
  r.time_limit_ms = 60'000;
  r.held = true;
  r.slot = "0";
  r.memory = MemoryEngine::kSwap;
  Result<JobRecord> back = JobFromJson(JobToJson(r));
  REQUIRE(back.ok());
  CHECK(back->id == 12);
  CHECK(back->name == "train");
  CHECK(back->argv == r.argv);
  CHECK(back->uid == 1001u);
  CHECK(back->priority == 5);
  CHECK(back->state == JobState::kFailed);
  CHECK(back->start_time == r.start_time);
  CHECK(back->end_time == r.end_time);
  CHECK(back->exit_code == 3);
  CHECK_FALSE(back->signal);
  CHECK(back->output == r.output);
  CHECK(back->time_limit_ms == 60'000);
  CHECK(back->held);
  CHECK(back->slot == "0");
  CHECK(back->memory == MemoryEngine::kSwap);
  CHECK_FALSE(back->IsArrayTask());
  CHECK(JobToJson(r)["array_task_id"].is_null());
  CHECK_FALSE(JobFromJson({{"id", 1}, {"state", "NAPPING"}}).ok());
}

TEST_CASE("an array task read back from its JSON keeps its array fields") {
  JobRecord r;
  r.id = 15;
  r.argv = {"x"};
  r.array_job_id = 12;
  r.array_task_id = 6;
  r.array_task_count = 4;
  r.array_task_min = 0;
  r.array_task_max = 9;
  r.array_limit = 2;
  nlohmann::json j = JobToJson(r);
  CHECK(j["array_job_id"] == 12);
  CHECK(j["array_task_id"] == 6);
  Result<JobRecord> back = JobFromJson(j);
  REQUIRE(back.ok());
  CHECK(back->array_job_id == 12);
  CHECK(back->array_task_id == 6);
  CHECK(back->array_task_count == 4);
  CHECK(back->array_task_max == 9);
  CHECK(back->array_limit == 2);
}

TEST_CASE("a job's JSON carries every field of the table, and reads back whole") {
  JobRecord r = unit::EveryField();
  r.id = 31;
  const nlohmann::json j = JobToJson(r);
  // One key per field that JSON shows, plus "id" and "state_code"; no secret.
  size_t shown = 0;
#define GS_COUNT(member, column, key, rule, in_runs)  \
  if (JobFieldShown::rule != JobFieldShown::kNever) { \
    ++shown;                                          \
    CHECK_MESSAGE(j.contains(key), key);              \
  } else {                                            \
    CHECK_MESSAGE(!j.contains(key), key);             \
  }
  GS_JOB_FIELDS(GS_COUNT)
#undef GS_COUNT
  CHECK(j.size() == shown + 2);
  CHECK(j.dump().find(r.token) == std::string::npos);
  // Back: the record but for what JSON never carries. r is a Slurm job (kind) and an array task,
  // so both rules carry their fields here.
  Result<JobRecord> back = JobFromJson(j);
  REQUIRE(back.ok());
  JobRecord want = r;
  want.end_request.clear();
  want.runner_pid.reset();
  want.runner_start.reset();
  want.token.clear();
  CHECK(*back == want);
}

TEST_CASE("a job's two JSON forms agree: a run's fields are the job's, null where the job's are") {
  JobRecord r = unit::EveryField();
  r.id = 32;
  r.array_job_id = 0;  // no array task: its fields are null in both forms, not 0 in one
  r.array_task_id = 0;
  const nlohmann::json job = JobToJson(r);
  const nlohmann::json run = RunToJson(JobRun{r, true});
  CHECK(run["requeued"] == true);
  for (const auto& [key, value] : run.items()) {
    if (key == "requeued") continue;
    CHECK_MESSAGE(job.contains(key), key);
    CHECK_MESSAGE(job[key] == value, key);
  }
  CHECK(run["array_job_id"].is_null());
  CHECK(run.contains("lease_seconds"));
  CHECK_FALSE(run.contains("argv"));  // a run carries no command line (acct lists many)
  Result<JobRun> back = RunFromJson(run);
  REQUIRE(back.ok());
  CHECK(back->requeued);
  CHECK(back->job.lease_seconds == r.lease_seconds);
  CHECK(back->job.array_job_id == 0);
}

}  // namespace
}  // namespace gshare::unit_job_list
