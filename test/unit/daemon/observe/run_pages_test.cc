// Issue 24: `gshare acct` through the system daemon: kListJobs's runs request survives the
// wire, and the reply comes in pages that together list every run once, in order.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "daemon/observe/job_list_reply.h"
#include "ipc/job_list.h"
#include "store/job_store.h"
#include "daemon/job_records.h"
#include "temp_dir.h"

namespace gshare::unit_run_pages {
namespace {

TEST_CASE("Issue 24: a runs request and a run read back as they were sent") {
  ListJobsRequest request;
  RunFilter f;
  f.since = 10.5;
  f.until = 99;
  f.states = {JobState::kFailed, JobState::kTimeout};
  f.requeued = true;
  f.uid = 1000;
  f.after_id = 7;
  f.max_rows = 3;
  request.runs = f;
  Result<ListJobsRequest> back = ListJobsRequest::Parse(request.ToJson());
  REQUIRE(back.ok());
  REQUIRE(back->runs.has_value());
  CHECK(back->runs->since == 10.5);
  CHECK(back->runs->until == 99);
  CHECK(back->runs->states == f.states);
  CHECK(back->runs->requeued);
  CHECK(back->runs->uid == 1000u);
  CHECK(back->runs->after_id == 7);
  CHECK(back->runs->max_rows == 3);
  CHECK_FALSE(ListJobsRequest::Parse({{"runs", {{"since", 0}}}}).ok());  // no until
  CHECK_FALSE(
      ListJobsRequest::Parse({{"runs", {{"since", 0}, {"until", 1}, {"states", {"BOGUS"}}}}}).ok());

  JobRun run;
  run.job.id = 5;
  run.job.name = "a";
  run.job.state = JobState::kCancelled;
  run.job.signal = 15;
  run.job.start_time = 3;
  run.job.lease_seconds = 1.5;
  run.job.peak_bytes = 1ull << 40;
  run.job.swaps_out = 2;
  run.job.restarts = 1;
  run.job.gpus = 2;
  run.requeued = true;
  Result<JobRun> read = RunFromJson(RunToJson(run));
  REQUIRE(read.ok());
  CHECK(read->requeued);
  CHECK(read->job.id == 5);
  CHECK(read->job.state == JobState::kCancelled);
  CHECK(read->job.signal == 15);
  CHECK_FALSE(read->job.end_time.has_value());
  CHECK(read->job.lease_seconds == 1.5);
  CHECK(read->job.peak_bytes == 1ull << 40);
  CHECK(read->job.swaps_out == 2);
  CHECK(read->job.restarts == 1);
  CHECK(read->job.gpus == 2);
}

TEST_CASE("Issue 24: the daemon's runs come in pages that list each run once") {
  TempDir dir;
  Result<std::unique_ptr<JobStore>> opened = JobStore::Open(dir.path() + "/jobs.db");
  REQUIRE(opened.ok());
  JobStore& store = *opened.value();
  std::vector<int64_t> ids;
  for (int i = 0; i < 5; ++i) {
    JobRecord r;
    r.name = "j" + std::to_string(i);
    r.state = JobState::kCompleted;
    r.submit_time = 10 + i;
    r.start_time = 11 + i;
    r.end_time = 12 + i;
    Result<int64_t> id = store.Insert(r);
    REQUIRE(id.ok());
    r.id = id.value();
    ids.push_back(r.id);
    if (i == 2) {  // requeued once: two runs
      JobRecord again = r;
      ResetForQueue(again);
      REQUIRE(store.SaveRequeued(JobRun{r, false}, 20, &again).ok());
      again.state = JobState::kCompleted;
      again.start_time = 21;
      again.end_time = 22;
      REQUIRE(store.Save(again).ok());
    }
  }
  std::vector<std::pair<int64_t, int>> seen;
  ListJobsRequest request;
  request.runs = RunFilter{};
  request.runs->until = 100;
  request.runs->max_rows = 2;
  int pages = 0;
  for (;;) {
    nlohmann::json reply = nlohmann::json::parse(ListJobsReply(store, request, [](auto*) {}));
    REQUIRE(reply["ok"] == true);
    ++pages;
    for (const auto& j : reply["runs"]) seen.emplace_back(j["id"], j["restarts"]);
    if (reply["next_after"].is_null()) break;
    request.runs->after_id = reply["next_after"];
    REQUIRE(pages < 10);
  }
  CHECK(pages == 3);
  std::vector<std::pair<int64_t, int>> want = {{ids[0], 0}, {ids[1], 0}, {ids[2], 0},
                                               {ids[2], 1}, {ids[3], 0}, {ids[4], 0}};
  CHECK(seen == want);
}

}  // namespace
}  // namespace gshare::unit_run_pages
