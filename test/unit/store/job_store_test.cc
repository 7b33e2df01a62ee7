#include "store/job_store.h"

#include <doctest/doctest.h>

#include "store_test_util.h"
#include "model/every_field.h"
#include "temp_dir.h"
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

namespace gshare::unit_job_store {
namespace {

using unit::EveryField;

TEST_CASE("JobStore round-trips a record, argv with spaces, quotes and unicode") {
  TempDir dir;
  std::unique_ptr<JobStore> store = OpenOrDie(dir.path() + "/jobs.db");
  JobRecord in = SampleJob("train ünïcødé");
  in.id = 42;  // ignored
  in.argv = {"sh", "-c", "echo \"hi there\" 'single' \\back\\slash", "", "日本語 🚀", "a\tb\nc"};
  in.priority = -7;
  in.quantum_ms = 20'000;
  in.gpu = "0,1";
  in.reason = "Priority";
  in.start_time = 1700000001.25;
  in.exit_code = 3;
  in.signal = 9;
  in.pid = 4321;
  in.lease_seconds = 1.5;
  in.wait_seconds = 2.5;
  in.peak_bytes = 80ULL << 30;
  in.kind = JobKind::kRun;
  int64_t id = InsertOrDie(store.get(), in);
  CHECK(id != 42);
  JobRecord out = GetOrDie(store.get(), id);
  CHECK(out.id == id);
  CHECK(out.name == in.name);
  CHECK(out.argv == in.argv);
  CHECK(out.cwd == in.cwd);
  CHECK(out.uid == 1000);
  CHECK(out.priority == -7);
  CHECK(out.quantum_ms == 20'000);
  CHECK(out.gpu == "0,1");
  CHECK(out.state == JobState::kPending);
  CHECK(out.reason == "Priority");
  CHECK(out.submit_time == in.submit_time);
  CHECK(out.start_time == in.start_time);
  CHECK_FALSE(out.end_time.has_value());
  CHECK(out.exit_code == 3);
  CHECK(out.signal == 9);
  CHECK(out.pid == 4321);
  CHECK(out.lease_seconds == 1.5);
  CHECK(out.wait_seconds == 2.5);
  CHECK(out.peak_bytes == (80ULL << 30));
  CHECK(out.kind == JobKind::kRun);

  int64_t plain = InsertOrDie(store.get(), SampleJob("plain"));
  CHECK(plain > id);
  JobRecord p = GetOrDie(store.get(), plain);
  CHECK_FALSE(p.start_time.has_value());
  CHECK_FALSE(p.exit_code.has_value());
  CHECK_FALSE(p.signal.has_value());
  CHECK_FALSE(p.pid.has_value());

  Result<std::optional<JobRecord>> none = store->Get(9999);
  REQUIRE(none.ok());
  CHECK_FALSE(none.value().has_value());
}

TEST_CASE("JobStore: a row of unknown state or kind is damaged") {
  TempDir dir;
  const std::string path = dir.path() + "/jobs.db";
  std::unique_ptr<JobStore> store = OpenOrDie(path);
  int64_t id = InsertOrDie(store.get(), SampleJob("edited"));
  int64_t fine = InsertOrDie(store.get(), SampleJob("fine"));
  // Edits job `id`'s row behind the store's back: "UPDATE jobs SET <sets> WHERE id = <id>".
  const auto edit = [&path, id](const std::string& sets) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    const std::string sql = "UPDATE jobs SET " + sets + " WHERE id = " + std::to_string(id);
    REQUIRE(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
  };
  edit("state = 'DONE'");
  Result<std::optional<JobRecord>> got = store->Get(id);
  REQUIRE_FALSE(got.ok());
  CHECK(got.status().message().find("unknown job state \"DONE\"") != std::string::npos);
  std::vector<std::pair<int64_t, std::string>> bad_rows;
  Result<std::vector<JobRecord>> rows = store->List({}, &bad_rows);
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 1);
  CHECK(rows->front().id == fine);
  REQUIRE(bad_rows.size() == 1);
  CHECK(bad_rows.front().first == id);

  // An argv edited to hold a number is a damaged row too, not an exception out of the store.
  edit("state = 'PENDING', argv = '[\"python\", 5]'");
  got = store->Get(id);
  REQUIRE_FALSE(got.ok());
  CHECK(got.status().message().find("argv holds a non-string") != std::string::npos);

  // So is a kind this build does not know (a newer one's, or an edit).
  edit("argv = '[\"python\"]', kind = 'batch'");
  got = store->Get(id);
  REQUIRE_FALSE(got.ok());
  CHECK(got.status().message().find("unknown job kind \"batch\"") != std::string::npos);
}

TEST_CASE("JobStore saves every column of a record") {
  TempDir dir;
  std::unique_ptr<JobStore> store = OpenOrDie(dir.path() + "/jobs.db");
  JobRecord r = SampleJob("j");
  r.id = InsertOrDie(store.get(), r);
  r.state = JobState::kFailed;
  r.reason = "job supervisor ended unexpectedly";
  r.start_time = 1700000010.0;
  r.end_time = 1700000020.0;
  r.exit_code = 1;
  r.pid = 555;
  r.lease_seconds = 8.0;
  r.wait_seconds = 2.0;
  r.peak_bytes = 4096;
  r.kind = JobKind::kSubmit;
  r.output = "/logs/%j.out";
  r.time_limit_ms = 60'000;
  r.kill_after_ms = 5'000;
  r.dependency = "afterok:1:2";
  r.held = true;
  r.begin_time = 1700000100.25;
  r.end_request = "cancel";
  r.runner_pid = 777;
  r.runner_start = 123456789012;
  r.slot = "1";
  REQUIRE(store->Save(r).ok());
  JobRecord back = GetOrDie(store.get(), r.id);
  CHECK(back.state == JobState::kFailed);
  CHECK(back.reason == r.reason);
  CHECK(back.start_time == 1700000010.0);
  CHECK(back.end_time == 1700000020.0);
  CHECK(back.exit_code == 1);
  CHECK_FALSE(back.signal.has_value());
  CHECK(back.pid == 555);
  CHECK(back.lease_seconds == 8.0);
  CHECK(back.wait_seconds == 2.0);
  CHECK(back.peak_bytes == 4096);
  CHECK(back.output == "/logs/%j.out");
  CHECK(back.time_limit_ms == 60'000);
  CHECK(back.kill_after_ms == 5'000);
  CHECK(back.dependency == "afterok:1:2");
  CHECK(back.held);
  CHECK(back.begin_time == 1700000100.25);
  CHECK(back.end_request == "cancel");
  CHECK(back.runner_pid == 777);
  CHECK(back.runner_start == 123456789012);
  CHECK(back.slot == "1");

  ResetForQueue(r);
  REQUIRE(store->Save(r).ok());
  back = GetOrDie(store.get(), r.id);
  CHECK(back.state == JobState::kPending);
  CHECK_FALSE(back.start_time.has_value());
  CHECK_FALSE(back.runner_pid.has_value());
  CHECK(back.end_request.empty());
  CHECK(back.dependency == "afterok:1:2");  // options stay

  r.id = 777;
  CHECK_FALSE(store->Save(r).ok());
}

TEST_CASE("JobStore: every field of a record comes back after the database is reopened") {
  TempDir dir;
  const std::string path = dir.path() + "/jobs.db";
  JobRecord want = EveryField();
  {
    std::unique_ptr<JobStore> store = OpenOrDie(path);
    want.id = InsertOrDie(store.get(), want);
  }
  std::unique_ptr<JobStore> reopened = OpenOrDie(path);
  CHECK(GetOrDie(reopened.get(), want.id) == want);
  // And through Save, every field changed.
  JobRecord changed = want;
  changed.name = "renamed";
  changed.argv = {"sh", "-c", "true"};
  changed.gpus = 3;
  changed.state = JobState::kFailed;
  changed.mail_type = "ALL";
  changed.slurm_step = "0";
  changed.signal.reset();
  REQUIRE(reopened->Save(changed).ok());
  reopened.reset();
  CHECK(GetOrDie(OpenOrDie(path).get(), want.id) == changed);
}

TEST_CASE("JobStore keeps a payload with its job and deletes ended jobs") {
  TempDir dir;
  std::unique_ptr<JobStore> store = OpenOrDie(dir.path() + "/jobs.db");
  JobPayload payload;
  payload.env = {"HOME=/home/u", "X=a b"};
  payload.script = "#!/bin/sh\necho hi\n";
  Result<int64_t> with = store->Insert(SampleJob("with"), &payload);
  REQUIRE(with.ok());
  int64_t without = InsertOrDie(store.get(), SampleJob("without"));
  Result<JobPayload> got = store->GetPayload(with.value());
  REQUIRE(got.ok());
  CHECK(got->env == payload.env);
  CHECK(got->script == payload.script);
  got = store->GetPayload(without);
  REQUIRE(got.ok());
  CHECK(got->env.empty());
  CHECK_FALSE(got->script.has_value());

  REQUIRE(store->SetReasons({{with.value(), "Dependency"}, {without, "Priority"}}).ok());
  CHECK(GetOrDie(store.get(), with.value()).reason == "Dependency");
  CHECK(GetOrDie(store.get(), without).reason == "Priority");

  JobRecord old = SampleJob("old", "COMPLETED");
  old.end_time = 100.0;
  JobRecord recent = SampleJob("recent", "FAILED");
  recent.end_time = 200.0;
  JobRecord needed = SampleJob("needed", "COMPLETED");
  needed.end_time = 100.0;
  int64_t old_id = InsertOrDie(store.get(), old);
  int64_t recent_id = InsertOrDie(store.get(), recent);
  int64_t needed_id = store->Insert(needed, &payload).value();
  constexpr size_t kAll = std::numeric_limits<size_t>::max();
  Result<std::vector<JobRecord>> deleted = store->DeleteEnded(150.0, kAll, {needed_id});
  REQUIRE(deleted.ok());
  REQUIRE(deleted->size() == 1);
  CHECK(deleted->front().id == old_id);
  CHECK_FALSE(store->Get(old_id).value().has_value());
  CHECK(store->Get(recent_id).value().has_value());
  CHECK(store->Get(with.value()).value().has_value());  // pending: never deleted
  deleted = store->DeleteEnded(1e12, kAll, {});
  REQUIRE(deleted.ok());
  CHECK(deleted->size() == 2);
  CHECK(store->GetPayload(needed_id)->env.empty());  // the payload went with it
}

TEST_CASE("JobStore keeps the newest ended jobs by count, and those a pending job needs") {
  TempDir dir;
  std::unique_ptr<JobStore> store = OpenOrDie(dir.path() + "/jobs.db");
  std::vector<int64_t> ids;
  for (int i = 0; i < 5; ++i) {
    JobRecord r = SampleJob("ended" + std::to_string(i), "COMPLETED");
    r.end_time = 1000.0 - 100.0 * i;  // job i ended i-th last
    ids.push_back(InsertOrDie(store.get(), r));
  }
  int64_t pending = InsertOrDie(store.get(), SampleJob("pending"));
  // Keep 2 by count, nothing by age, and job 4 (the oldest) because something needs it.
  Result<std::vector<JobRecord>> deleted = store->DeleteEnded(0.0, 2, {ids[4]});
  REQUIRE(deleted.ok());
  std::set<int64_t> gone;
  for (const JobRecord& r : deleted.value()) gone.insert(r.id);
  CHECK(gone == std::set<int64_t>{ids[2], ids[3]});
  CHECK(store->Get(ids[0]).value().has_value());
  CHECK(store->Get(ids[1]).value().has_value());
  CHECK(store->Get(ids[4]).value().has_value());
  CHECK(store->Get(pending).value().has_value());
  // Age and count together: a job among the newest but ended before the cutoff goes.
  deleted = store->DeleteEnded(950.0, 2, {});
  REQUIRE(deleted.ok());
  REQUIRE(deleted->size() == 2);
  CHECK(store->Get(ids[0]).value().has_value());
}

TEST_CASE("JobStore lists newest first, filtered by state and limited") {
  TempDir dir;
  std::unique_ptr<JobStore> store = OpenOrDie(dir.path() + "/jobs.db");
  int64_t a = InsertOrDie(store.get(), SampleJob("a", "PENDING"));
  int64_t b = InsertOrDie(store.get(), SampleJob("b", "RUNNING"));
  int64_t c = InsertOrDie(store.get(), SampleJob("c", "COMPLETED"));
  int64_t d = InsertOrDie(store.get(), SampleJob("d", "PENDING"));

  auto ids = [&](const ListFilter& f) {
    Result<std::vector<JobRecord>> rows = store->List(f);
    REQUIRE_MESSAGE(rows.ok(), rows.status().message());
    std::vector<int64_t> out;
    for (const JobRecord& r : rows.value()) out.push_back(r.id);
    return out;
  };
  auto filter = [](std::set<std::string> states, int limit) {
    ListFilter f;
    for (const std::string& name : states) f.states.insert(JobStateFromName(name).value());
    f.limit = limit;
    return f;
  };
  CHECK(ids({}) == std::vector<int64_t>{d, c, b, a});
  CHECK(ids(filter({}, 2)) == std::vector<int64_t>{d, c});
  CHECK(ids(filter({"PENDING"}, 0)) == std::vector<int64_t>{d, a});
  CHECK(ids(filter({"PENDING", "RUNNING"}, 0)) == std::vector<int64_t>{d, b, a});
  CHECK(ids(filter({"PENDING", "RUNNING"}, 1)) == std::vector<int64_t>{d});
  CHECK(ids(filter({"TIMEOUT"}, 0)).empty());
  CHECK(GetOrDie(store.get(), c).name == "c");  // cached statements stay usable
}

TEST_CASE("JobStore lists in queue order, by name and by owner, read-only too") {
  TempDir dir;
  const std::string path = dir.path() + "/jobs.db";
  std::unique_ptr<JobStore> store = OpenOrDie(path);
  auto add = [&](const char* name, const char* state, int priority, double submit, uint32_t uid) {
    JobRecord r = SampleJob(name, state);
    r.priority = priority;
    r.submit_time = submit;
    r.uid = uid;
    if (std::string(state) == "RUNNING") r.start_time = submit + 1;
    return InsertOrDie(store.get(), r);
  };
  int64_t done = add("x", "COMPLETED", 0, 1.0, 1000);
  int64_t low = add("x", "PENDING", 0, 2.0, 1000);
  int64_t high_late = add("y", "PENDING", 5, 4.0, 1001);
  int64_t run = add("y", "RUNNING", 0, 3.0, 1000);
  int64_t high_early = add("x", "PENDING", 5, 3.5, 1000);
  ListFilter queue;
  queue.order = ListFilter::Order::kQueueOrder;
  auto ids = [&](JobStore& s, const ListFilter& f) {
    Result<std::vector<JobRecord>> rows = s.List(f);
    REQUIRE_MESSAGE(rows.ok(), rows.status().message());
    std::vector<int64_t> out;
    for (const JobRecord& r : rows.value()) out.push_back(r.id);
    return out;
  };
  CHECK(ids(*store, queue) == std::vector<int64_t>{run, high_early, high_late, low, done});
  ListFilter by_name = queue;
  by_name.name = "y";
  CHECK(ids(*store, by_name) == std::vector<int64_t>{run, high_late});
  ListFilter by_uid = queue;
  by_uid.uid = 1001;
  CHECK(ids(*store, by_uid) == std::vector<int64_t>{high_late});

  Result<std::unique_ptr<JobStore>> reader = JobStore::OpenReadOnly(path);
  REQUIRE_MESSAGE(reader.ok(), reader.status().message());
  CHECK(ids(*reader.value(), queue) == ids(*store, queue));
  std::vector<int64_t> streamed;
  REQUIRE(reader.value()
              ->ForEachInQueueOrder(queue, [&](const JobRecord& r) { streamed.push_back(r.id); })
              .ok());
  CHECK(streamed == ids(*store, queue));
  streamed.clear();
  ListFilter pending_of_x = queue;
  pending_of_x.states = {JobState::kPending};
  pending_of_x.name = "x";
  REQUIRE(
      reader.value()
          ->ForEachInQueueOrder(pending_of_x, [&](const JobRecord& r) { streamed.push_back(r.id); })
          .ok());
  CHECK(streamed == std::vector<int64_t>{high_early, low});
  JobRecord first;
  REQUIRE(reader.value()
              ->ForEachInQueueOrder(queue,
                                    [&](const JobRecord& r) {
                                      if (first.id == 0) first = r;
                                    })
              .ok());
  CHECK(first.name == "y");
  CHECK(first.state == JobState::kRunning);
  CHECK(first.start_time == 4.0);
  CHECK(first.argv.empty());  // not a summary column
  CHECK(first.cwd.empty());
  CHECK_FALSE(reader.value()->Insert(SampleJob("nope")).ok());
  CHECK_FALSE(JobStore::OpenReadOnly(dir.path() + "/missing.db").ok());
}

TEST_CASE("JobStore lists the queue from one snapshot while another connection commits") {
  // The daemon commits while a client lists: a job that ends between the pending pass and the
  // ended one is listed once, as it was when the listing began.
  TempDir dir;
  const std::string path = dir.path() + "/jobs.db";
  std::unique_ptr<JobStore> store = OpenOrDie(path);
  const int64_t running = InsertOrDie(store.get(), SampleJob("r", "RUNNING"));
  const int64_t pending = InsertOrDie(store.get(), SampleJob("p", "PENDING"));
  std::unique_ptr<JobStore> daemon = OpenOrDie(path);
  ListFilter queue;
  queue.order = ListFilter::Order::kQueueOrder;
  std::vector<std::pair<int64_t, JobState>> seen;
  REQUIRE(store
              ->ForEachInQueueOrder(queue,
                                    [&](const JobRecord& r) {
                                      seen.emplace_back(r.id, r.state);
                                      if (r.id != pending) return;
                                      JobRecord done = GetOrDie(daemon.get(), pending);
                                      done.state = JobState::kCompleted;
                                      done.end_time = 5.0;
                                      REQUIRE(daemon->Save(done).ok());
                                    })
              .ok());
  CHECK(seen == std::vector<std::pair<int64_t, JobState>>{{running, JobState::kRunning},
                                                          {pending, JobState::kPending}});
  // The next listing sees the commit.
  std::vector<int64_t> after;
  REQUIRE(
      store->ForEachInQueueOrder(queue, [&](const JobRecord& r) { after.push_back(r.id); }).ok());
  CHECK(after == std::vector<int64_t>{running, pending});
  CHECK(GetOrDie(store.get(), pending).state == JobState::kCompleted);
}

}  // namespace
}  // namespace gshare::unit_job_store
