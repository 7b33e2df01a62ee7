// Issue 24: the tasks of a job array are rows of their own that share one payload.
#include <doctest/doctest.h>

#include <limits>

#include "store/job_store.h"
#include "store_test_util.h"
#include "temp_dir.h"

namespace gshare::unit_job_array_store {
namespace {

std::vector<JobRecord> Tasks(std::vector<int64_t> task_ids, int64_t limit) {
  std::vector<JobRecord> tasks;
  for (int64_t task : task_ids) {
    JobRecord r;
    r.name = "sweep";
    r.argv = {"train.sh"};
    r.uid = 1000;
    r.submit_time = 5.0;
    r.array_task_id = task;
    r.array_task_count = static_cast<int64_t>(task_ids.size());
    r.array_task_min = task_ids.front();
    r.array_task_max = task_ids.back();
    r.array_limit = limit;
    tasks.push_back(r);
  }
  return tasks;
}

TEST_CASE("an array's tasks get ids, the first one's as the array's, and one payload") {
  TempDir dir;
  std::unique_ptr<JobStore> store = OpenOrDie(dir.path() + "/jobs.db");
  JobRecord before;
  before.name = "plain";
  before.argv = {"x"};
  REQUIRE(store->Insert(before).ok());  // id 1: the array does not start at 1
  std::vector<JobRecord> tasks = Tasks({0, 4, 8}, 2);
  JobPayload payload;
  payload.env = {"A=1"};
  payload.script = "#!/bin/sh\necho $GSHARE_ARRAY_TASK_ID\n";
  payload.submit_key = "k1";
  REQUIRE(store->InsertArray(&tasks, payload).ok());
  CHECK(tasks[0].id == 2);
  CHECK(tasks[2].id == 4);
  for (const JobRecord& t : tasks) {
    CHECK(t.array_job_id == 2);
    JobRecord back = GetOrDie(store.get(), t.id);
    CHECK(back.array_job_id == 2);
    CHECK(back.array_task_id == t.array_task_id);
    CHECK(back.array_task_count == 3);
    CHECK(back.array_task_min == 0);
    CHECK(back.array_task_max == 8);
    CHECK(back.array_limit == 2);
    CHECK(PayloadIdOf(back) == 2);
    Result<JobPayload> got = store->GetPayload(PayloadIdOf(back));
    REQUIRE(got.ok());
    CHECK(got->script == payload.script);
    CHECK(got->env == payload.env);
  }
  CHECK(store->GetPayload(3)->env.empty());  // stored once, under the array's id
  CHECK(store->FindBySubmitKey("k1").value() == std::optional<int64_t>(2));
  // The queue's summaries carry the array ids.
  std::vector<std::pair<int64_t, int64_t>> seen;
  REQUIRE(store
              ->ForEachInQueueOrder({},
                                    [&](const JobRecord& r) {
                                      if (r.IsArrayTask())
                                        seen.emplace_back(r.array_job_id, r.array_task_id);
                                    })
              .ok());
  CHECK(seen == std::vector<std::pair<int64_t, int64_t>>{{2, 0}, {2, 4}, {2, 8}});

  // The payload stays while any task is stored, the first one's row gone or not.
  constexpr size_t kAll = std::numeric_limits<size_t>::max();
  for (int64_t id : {2, 3}) {
    JobRecord done = GetOrDie(store.get(), id);
    done.state = JobState::kCompleted;
    done.end_time = 10.0;
    REQUIRE(store->Save(done).ok());
  }
  Result<std::vector<JobRecord>> deleted = store->DeleteEnded(1e12, kAll, {});
  REQUIRE(deleted.ok());
  CHECK(deleted->size() == 2);
  CHECK(store->GetPayload(2)->script == payload.script);  // task 4 still needs it
  JobRecord last = GetOrDie(store.get(), 4);
  last.state = JobState::kCancelled;
  last.end_time = 11.0;
  REQUIRE(store->Save(last).ok());
  REQUIRE(store->DeleteEnded(1e12, kAll, {}).ok());
  CHECK_FALSE(store->GetPayload(2)->script.has_value());
  CHECK_FALSE(store->FindBySubmitKey("k1").value().has_value());
}

TEST_CASE("an array that cannot be stored leaves no task behind") {
  TempDir dir;
  std::unique_ptr<JobStore> store = OpenOrDie(dir.path() + "/jobs.db");
  std::vector<JobRecord> none;
  CHECK_FALSE(store->InsertArray(&none, JobPayload{}).ok());
  // A second submission with a key already used fails at its payload: rolled back whole.
  std::vector<JobRecord> first = Tasks({0, 1}, 0);
  JobPayload keyed;
  keyed.submit_key = "same";
  REQUIRE(store->InsertArray(&first, keyed).ok());
  std::vector<JobRecord> again = Tasks({0, 1}, 0);
  CHECK_FALSE(store->InsertArray(&again, keyed).ok());
  CHECK(again[0].id == 0);
  Result<std::vector<JobRecord>> all = store->List({});
  REQUIRE(all.ok());
  CHECK(all->size() == 2);
}

}  // namespace
}  // namespace gshare::unit_job_array_store
