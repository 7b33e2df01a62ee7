// Issue 24: each run of a requeued job is kept (job_runs), and ForEachRun lists every run of a
// time window as `gshare acct` shows them.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <vector>

#include "store/job_store.h"
#include "store_test_util.h"
#include "temp_dir.h"

namespace gshare::unit_job_runs {
namespace {

JobRecord Ended(std::string name, JobState state, double submit, double start, double end) {
  JobRecord r;
  r.name = std::move(name);
  r.argv = {"train.sh"};
  r.uid = 1000;
  r.state = state;
  r.submit_time = submit;
  r.start_time = start;
  r.end_time = end;
  r.exit_code = state == JobState::kCompleted ? 0 : 3;
  r.lease_seconds = end - start;
  r.peak_bytes = 1 << 20;
  r.swaps_out = 2;
  r.swaps_in = 1;
  return r;
}

std::vector<JobRun> Runs(JobStore* store, RunFilter filter) {
  std::vector<JobRun> runs;
  Status st = store->ForEachRun(filter, [&runs](const JobRun& r) { runs.push_back(r); });
  REQUIRE_MESSAGE(st.ok(), st.message());
  return runs;
}

RunFilter Window(double since, double until) {
  RunFilter f;
  f.since = since;
  f.until = until;
  return f;
}

// Job `id` requeued at `when` after its run `ran`.
void Requeue(JobStore* store, JobRecord ran, bool by_request, double when) {
  JobRecord again = ran;
  ResetForQueue(again);
  Status st = store->SaveRequeued(JobRun{ran, by_request}, when, &again);
  REQUIRE_MESSAGE(st.ok(), st.message());
  CHECK(again.restarts == ran.restarts + 1);
}

TEST_CASE("Issue 24: a requeued job keeps each earlier run, listed before its row") {
  TempDir dir;
  std::unique_ptr<JobStore> store = OpenOrDie(dir.path() + "/jobs.db");
  JobRecord first = Ended("a", JobState::kFailed, 100, 110, 130);
  first.id = InsertOrDie(store.get(), first);
  const int64_t other = InsertOrDie(store.get(), Ended("b", JobState::kCompleted, 101, 102, 103));
  Requeue(store.get(), first, false, 200);
  // The second run: started at 210, ended by a requeue request at 220.
  JobRecord second = *store->Get(first.id).value();
  CHECK(second.state == JobState::kPending);
  CHECK(second.restarts == 1);
  CHECK(second.swaps_out == 0);
  second.state = JobState::kCancelled;
  second.start_time = 210;
  second.end_time = 220;
  second.reason = "requeued";
  Requeue(store.get(), second, true, 220);
  // The third run completes.
  JobRecord third = *store->Get(first.id).value();
  CHECK(third.restarts == 2);
  third.state = JobState::kCompleted;
  third.start_time = 230;
  third.end_time = 240;
  third.exit_code = 0;
  REQUIRE(store->Save(third).ok());

  std::vector<JobRun> runs = Runs(store.get(), Window(0, 1000));
  REQUIRE(runs.size() == 4);
  CHECK(runs[0].job.id == first.id);
  CHECK(runs[0].job.restarts == 0);
  CHECK(runs[0].job.state == JobState::kFailed);
  CHECK(runs[0].job.exit_code == 3);
  CHECK(runs[0].job.submit_time == 100);
  CHECK(runs[0].job.end_time == 130);
  CHECK(runs[0].job.swaps_out == 2);
  CHECK(runs[0].job.lease_seconds == 20);
  CHECK_FALSE(runs[0].requeued);
  CHECK(runs[1].job.restarts == 1);
  CHECK(runs[1].requeued);
  CHECK(runs[1].job.submit_time == 200);  // when the run before it was requeued
  CHECK(runs[1].job.start_time == 210);
  CHECK(runs[2].job.restarts == 2);
  CHECK(runs[2].job.state == JobState::kCompleted);
  CHECK(runs[2].job.submit_time == 220);
  CHECK(runs[2].job.name == "a");  // the job's own columns
  CHECK(runs[3].job.id == other);

  SUBCASE("the window and the state filter apply to each run") {
    std::vector<JobRun> late = Runs(store.get(), Window(215, 1000));
    REQUIRE(late.size() == 2);
    CHECK(late[0].job.restarts == 1);
    CHECK(late[1].job.restarts == 2);
    CHECK(Runs(store.get(), Window(0, 105)).size() == 2);  // a's first run and b
    RunFilter failed = Window(0, 1000);
    failed.states = {JobState::kFailed};
    std::vector<JobRun> f = Runs(store.get(), failed);
    REQUIRE(f.size() == 1);
    CHECK(f[0].job.restarts == 0);
    RunFilter requeued = Window(0, 1000);
    requeued.requeued = true;
    std::vector<JobRun> rq = Runs(store.get(), requeued);
    REQUIRE(rq.size() == 1);
    CHECK(rq[0].job.restarts == 1);
    RunFilter nobody = Window(0, 1000);
    nobody.uid = 4242;
    CHECK(Runs(store.get(), nobody).empty());
  }
  SUBCASE("clean deletes a job's runs with it") {
    REQUIRE(store->DeleteEnded(1e9, 0, {}).ok());
    CHECK(Runs(store.get(), Window(0, 1000)).empty());
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open((dir.path() + "/jobs.db").c_str(), &db) == SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, "SELECT count(*) FROM job_runs", -1, &stmt, nullptr) ==
            SQLITE_OK);
    REQUIRE(sqlite3_step(stmt) == SQLITE_ROW);
    CHECK(sqlite3_column_int(stmt, 0) == 0);
    sqlite3_finalize(stmt);
    sqlite3_close(db);
  }
}

TEST_CASE("Issue 24: a run kept twice fails and leaves the row as it was") {
  TempDir dir;
  std::unique_ptr<JobStore> store = OpenOrDie(dir.path() + "/jobs.db");
  JobRecord ran = Ended("a", JobState::kFailed, 100, 110, 130);
  ran.id = InsertOrDie(store.get(), ran);
  Requeue(store.get(), ran, false, 200);
  JobRecord again = ran;
  ResetForQueue(again);
  CHECK_FALSE(store->SaveRequeued(JobRun{ran, false}, 300, &again).ok());
  CHECK(again.restarts == 0);
  CHECK(store->Get(ran.id).value()->restarts == 1);
}

TEST_CASE("a schema 8 database opens at schema 9 with its jobs, no runs") {
  TempDir dir;
  const std::string path = dir.path() + "/jobs.db";
  int64_t id = 0;
  {
    std::unique_ptr<JobStore> store = OpenOrDie(path);
    id = InsertOrDie(store.get(), Ended("old", JobState::kCompleted, 5, 6, 7));
  }
  // Back to schema 8 as it was: without schema 9's columns and table (and the later ones').
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db,
                       "DROP TABLE timeline;"
                       "ALTER TABLE jobs DROP COLUMN slurm_job_id;"
                       "ALTER TABLE jobs DROP COLUMN slurm_step;"
                       "ALTER TABLE jobs DROP COLUMN mail_user;"
                       "ALTER TABLE jobs DROP COLUMN mail_type;"
                       "ALTER TABLE jobs DROP COLUMN error;"
                       "ALTER TABLE jobs DROP COLUMN open_append;"
                       "ALTER TABLE jobs DROP COLUMN warn_signal;"
                       "ALTER TABLE jobs DROP COLUMN warn_ms;"
                       "ALTER TABLE jobs DROP COLUMN warn_main_only;"
                       "ALTER TABLE jobs DROP COLUMN swaps_out;"
                       "ALTER TABLE jobs DROP COLUMN swaps_in;"
                       "ALTER TABLE jobs DROP COLUMN restarts;"
                       "DROP TABLE job_runs;"
                       "PRAGMA user_version = 8;",
                       nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  std::unique_ptr<JobStore> store = OpenOrDie(path);
  CHECK(JobStore::SchemaVersion() >= 9);
  JobRecord old = *store->Get(id).value();
  CHECK(old.name == "old");
  CHECK(old.swaps_out == 0);
  CHECK(old.restarts == 0);
  std::vector<JobRun> runs = Runs(store.get(), Window(0, 100));
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].job.lease_seconds == 1);
  CHECK(runs[0].job.peak_bytes == 1 << 20);
  Requeue(store.get(), old, false, 50);
  CHECK(Runs(store.get(), Window(0, 100)).size() == 2);
}

}  // namespace
}  // namespace gshare::unit_job_runs
