// BatchQueue against a real SQLite store in a scratch directory and a manual clock.
#include "daemon/jobs/batch_queue.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <map>
#include <cstdio>
#include <memory>

#include "daemon/job_records.h"
#include "temp_dir.h"

namespace gshare::unit_batch_queue {
namespace {

struct QueueFixture {
  TempDir dir;
  std::unique_ptr<JobStore> store;
  ManualClock clock;
  std::map<int64_t, JobState> active;  // what the daemon would answer
  std::unique_ptr<BatchQueue> queue;
  AdmissionLimits one_slot{1, 1};

  QueueFixture() {
    store = OpenStoreOrFail(dir.path() + "/q.db");
    queue = std::make_unique<BatchQueue>(*store, clock, [this](int64_t id) {
      auto it = active.find(id);
      return it == active.end() ? std::nullopt : std::optional<JobState>(it->second);
    });
  }

  // A PENDING submitted job, stored and queued; its id.
  int64_t Submit(int priority, std::string dependency = "", std::optional<double> begin = {},
                 int64_t array_job_id = 0, int64_t array_limit = 0) {
    JobRecord r = SubmittedJob(JobState::kPending);
    r.priority = priority;
    r.dependency = std::move(dependency);
    r.begin_time = begin;
    r.submit_time = clock.WallNow();
    r.array_job_id = array_job_id;
    r.array_limit = array_limit;
    return StoreAndQueue(*store, *queue, r);
  }

  std::string StoredReason(int64_t id) {
    auto row = store->Get(id);
    REQUIRE(row.ok());
    REQUIRE(row.value().has_value());
    return row.value()->reason;
  }
};

TEST_CASE("BatchQueue admits by priority and stores the reasons of the others") {
  QueueFixture f;
  const int64_t low = f.Submit(0);
  const int64_t high = f.Submit(5);
  std::vector<BatchQueue::Start> starts = f.queue->Admit({}, f.one_slot);
  REQUIRE(starts.size() == 1);
  CHECK(starts[0].id == high);
  CHECK(starts[0].slot == "0");
  CHECK(f.StoredReason(low) == kReasonResources);
  // The start stays pending until the daemon takes it.
  CHECK(f.queue->StateOf(high) == JobState::kPending);
  REQUIRE(f.queue->Remove(high).has_value());
  f.active[high] = JobState::kRunning;
  CHECK(f.queue->StateOf(high) == JobState::kRunning);
  // Nothing changed since: no second decision (and none that ignores the running job).
  CHECK(f.queue->Admit({{"0", 1}}, f.one_slot).empty());
  CHECK_FALSE(f.queue->Deadline().has_value());
}

TEST_CASE("BatchQueue decides dependencies on ended jobs and refuses unknown ones") {
  QueueFixture f;
  const int64_t first = f.Submit(0);
  const int64_t second = f.Submit(9, "afterok:" + std::to_string(first));
  std::vector<BatchQueue::Start> starts = f.queue->Admit({}, f.one_slot);
  REQUIRE(starts.size() == 1);
  CHECK(starts[0].id == first);  // the higher priority waits on it
  CHECK(f.StoredReason(second) == kReasonDependency);
  f.queue->Remove(first);
  f.active[first] = JobState::kRunning;
  CHECK(f.queue->Admit({{"0", 1}}, f.one_slot).empty());  // nothing changed
  f.active.erase(first);
  f.queue->Ended(first, JobState::kCompleted);
  starts = f.queue->Admit({}, f.one_slot);
  REQUIRE(starts.size() == 1);
  CHECK(starts[0].id == second);
  CHECK(f.queue->DependedOn() == std::set<int64_t>{first});

  JobRecord orphan;
  orphan.dependency = "afterany:999";
  Status st = f.queue->CheckDependencies(orphan);
  CHECK_FALSE(st.ok());
  CHECK(st.message() == "dependency on job 999, which does not exist");
  CHECK(f.queue->NotInState(first, "pending").message() == "job 1 is COMPLETED, not pending");
  CHECK(f.queue->NotInState(999, "pending").message() == "no job 999");
}

TEST_CASE("BatchQueue knows a stored final state without asking the store again") {
  QueueFixture f;
  const int64_t id = f.Submit(0);
  f.queue->Remove(id);
  JobRecord r = f.store->Get(id).value().value();
  r.state = JobState::kFailed;
  REQUIRE(f.store->Save(r).ok());
  CHECK(f.queue->StateOf(id) == JobState::kFailed);
  // Final states never change, so the answer is kept; a row the store no longer has
  // (cleaned) is forgotten only when told.
  auto removed = f.store->DeleteEnded(f.clock.WallNow() + 1, 0, {});
  REQUIRE(removed.ok());
  CHECK(f.queue->StateOf(id) == JobState::kFailed);
  f.queue->Forget(id);
  CHECK_FALSE(f.queue->StateOf(id).has_value());
}

TEST_CASE("BatchQueue waits kStoreRetry after a start it could not record") {
  QueueFixture f;
  const int64_t id = f.Submit(0);
  REQUIRE(f.queue->Admit({}, f.one_slot).size() == 1);
  JobRecord r = *f.queue->Remove(id);
  f.queue->StartRefused(std::move(r));
  CHECK(f.queue->retrying());
  CHECK(f.queue->Deadline() == f.clock.Now() + BatchQueue::kStoreRetry);
  f.clock.Advance(BatchQueue::kStoreRetry - Millis(1));
  CHECK(f.queue->Admit({}, f.one_slot).empty());
  f.clock.Advance(Millis(1));
  std::vector<BatchQueue::Start> starts = f.queue->Admit({}, f.one_slot);
  REQUIRE(starts.size() == 1);
  CHECK(starts[0].id == id);
  CHECK_FALSE(f.queue->retrying());
}

TEST_CASE("BatchQueue wakes for a --begin time without another event") {
  QueueFixture f;
  const int64_t id = f.Submit(0, "", f.clock.WallNow() + 5);
  CHECK(f.queue->Admit({}, f.one_slot).empty());
  CHECK(f.StoredReason(id) == kReasonBeginTime);
  CHECK(f.queue->Deadline() == f.clock.Now() + Millis(5000));
  f.clock.Advance(Millis(4999));
  CHECK(f.queue->Admit({}, f.one_slot).empty());
  f.clock.Advance(Millis(1));
  std::vector<BatchQueue::Start> starts = f.queue->Admit({}, f.one_slot);
  REQUIRE(starts.size() == 1);
  CHECK(starts[0].id == id);
}

TEST_CASE("BatchQueue holds an array's tasks to its %N limit and says why") {
  QueueFixture f;
  AdmissionLimits slots{1, 4};
  const int64_t a = f.Submit(0, "", {}, 1, 2);  // tasks of array 1, "%2"
  const int64_t b = f.Submit(0, "", {}, 1, 2);
  const int64_t c = f.Submit(0, "", {}, 1, 2);
  std::vector<BatchQueue::Start> starts = f.queue->Admit({}, slots);
  REQUIRE(starts.size() == 2);
  CHECK(starts[0].id == a);
  CHECK(starts[1].id == b);
  CHECK(f.StoredReason(c) == kReasonArrayLimit);
  f.queue->Remove(a);
  f.queue->Remove(b);
  // The daemon counts the array's running tasks: while two run, the third waits.
  slots.array_running = {{1, 2}};
  f.queue->Changed();
  CHECK(f.queue->Admit({{"0", 2}}, slots).empty());
  slots.array_running = {{1, 1}};
  f.queue->Changed();
  starts = f.queue->Admit({{"0", 1}}, slots);
  REQUIRE(starts.size() == 1);
  CHECK(starts[0].id == c);
}

TEST_CASE(
    "BatchQueue: a pause is its file, kept across restarts; one not written changes nothing") {
  QueueFixture f;
  const std::string file = f.dir.path() + "/queue.paused";
  BatchQueue queue(
      *f.store, f.clock, [](int64_t) { return std::optional<JobState>(); }, file);
  CHECK_FALSE(queue.paused());
  REQUIRE(queue.SetPaused(true).ok());
  CHECK(queue.paused());
  CHECK(access(file.c_str(), F_OK) == 0);
  BatchQueue restarted(
      *f.store, f.clock, [](int64_t) { return std::optional<JobState>(); }, file);
  CHECK(restarted.paused());
  REQUIRE(restarted.SetPaused(false).ok());
  CHECK(access(file.c_str(), F_OK) != 0);
  CHECK(restarted.SetPaused(false).ok());  // already resumed: no file to remove

  BatchQueue nowhere(
      *f.store, f.clock, [](int64_t) { return std::optional<JobState>(); },
      f.dir.path() + "/no/such/dir/queue.paused");
  Status st = nowhere.SetPaused(true);
  CHECK_FALSE(st.ok());
  CHECK(st.message().rfind("cannot write ", 0) == 0);
  CHECK_FALSE(nowhere.paused());
}

TEST_CASE("BatchQueue: gshare parallel's number is its file, kept across restarts until reset") {
  QueueFixture f;
  const std::string file = f.dir.path() + "/queue.parallel";
  auto make = [&f, &file]() {
    return std::make_unique<BatchQueue>(
        *f.store, f.clock, [](int64_t) { return std::optional<JobState>(); }, "",
        BatchQueue::ActiveNamed{}, file);
  };
  std::unique_ptr<BatchQueue> queue = make();
  CHECK_FALSE(queue->parallel().has_value());
  CHECK(queue->MaxRunning(2) == 2);
  REQUIRE(queue->SetParallel(5).ok());
  CHECK(queue->MaxRunning(2) == 5);
  CHECK(ReadFile(file) == "5\n");
  CHECK_FALSE(queue->SetParallel(0).ok());  // out of range: nothing changes
  CHECK_FALSE(queue->SetParallel(BatchQueue::kMaxParallel + 1).ok());
  CHECK(queue->MaxRunning(2) == 5);
  queue = make();  // a restart
  CHECK(queue->parallel() == std::optional<int>(5));
  REQUIRE(queue->SetParallel(std::nullopt).ok());
  CHECK(queue->MaxRunning(2) == 2);
  CHECK(access(file.c_str(), F_OK) != 0);
  // A file that does not hold a number in range is warned about and ignored.
  for (const char* text : {"", "x\n", "0\n", "1001\n", "3 jobs\n"}) {
    FILE* out = std::fopen(file.c_str(), "w");
    REQUIRE(out != nullptr);
    std::fputs(text, out);
    std::fclose(out);
    CHECK_FALSE(make()->parallel().has_value());
  }
}

}  // namespace
}  // namespace gshare::unit_batch_queue
