// Issue 21: users of the system daemon read jobs through it (kListJobs).
#include "ipc/job_list.h"

#include <doctest/doctest.h>

#include "ipc/job_json.h"

namespace gshare::unit_job_list {
namespace {

TEST_CASE("issue21: a list request survives the wire") {
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

TEST_CASE("issue21: bad list requests are refused") {
  CHECK_FALSE(ListJobsRequest::Parse({{"job_id", 0}}).ok());
  CHECK_FALSE(ListJobsRequest::Parse({{"job_id", "7"}}).ok());
  CHECK_FALSE(ListJobsRequest::Parse({{"states", {"SLEEPING"}}}).ok());
  CHECK_FALSE(ListJobsRequest::Parse({{"order", "random"}}).ok());
  CHECK_FALSE(ListJobsRequest::Parse({{"limit", -1}}).ok());
  CHECK_FALSE(ListJobsRequest::Parse({{"uid", "root"}}).ok());
}

TEST_CASE("issue21: a job read back from its JSON is the job") {
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
  r.memory = "swap";
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
  CHECK(back->memory == "swap");
  CHECK_FALSE(back->IsArrayTask());
  CHECK(JobToJson(r)["array_task_id"].is_null());
  CHECK_FALSE(JobFromJson({{"id", 1}, {"state", "NAPPING"}}).ok());
}

TEST_CASE("issue 24: an array task read back from its JSON keeps its array fields") {
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

}  // namespace
}  // namespace gshare::unit_job_list
