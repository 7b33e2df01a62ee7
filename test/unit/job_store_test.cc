#include "job_store.h"

#include <doctest/doctest.h>

#include "temp_dir.h"
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace gshare {
namespace {

std::unique_ptr<JobStore> OpenOrDie(const std::string& path) {
  Result<std::unique_ptr<JobStore>> store = JobStore::Open(path);
  REQUIRE_MESSAGE(store.ok(), store.status().message());
  return std::move(store.value());
}

JobRecord Job(std::string name, std::string state = "PENDING") {
  JobRecord r;
  r.name = std::move(name);
  r.argv = {"python", "train.py"};
  r.cwd = "/home/u";
  r.uid = 1000;
  r.state = std::move(state);
  r.submit_time = 1700000000.5;
  return r;
}

int64_t InsertOrDie(JobStore* store, const JobRecord& r) {
  Result<int64_t> id = store->Insert(r);
  REQUIRE_MESSAGE(id.ok(), id.status().message());
  return id.value();
}

JobRecord GetOrDie(JobStore* store, int64_t id) {
  Result<std::optional<JobRecord>> r = store->Get(id);
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  REQUIRE(r.value().has_value());
  return *r.value();
}

// A PRAGMA's value read through a separate connection.
std::string Pragma(const std::string& path, const std::string& pragma) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, ("PRAGMA " + pragma).c_str(), -1, &stmt, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(stmt) == SQLITE_ROW);
  std::string value = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return value;
}

TEST_CASE("JobStore round-trips a record, argv with spaces, quotes and unicode") {
  TempDir dir;
  std::unique_ptr<JobStore> store = OpenOrDie(dir.path() + "/jobs.db");
  JobRecord in = Job("train ünïcødé");
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
  in.kind = "run";
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
  CHECK(out.state == "PENDING");
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
  CHECK(out.kind == "run");

  int64_t plain = InsertOrDie(store.get(), Job("plain"));
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

TEST_CASE("JobStore rejects unknown states and kinds") {
  TempDir dir;
  std::unique_ptr<JobStore> store = OpenOrDie(dir.path() + "/jobs.db");
  CHECK_FALSE(store->Insert(Job("x", "DONE")).ok());
  JobRecord bad_kind = Job("x");
  bad_kind.kind = "batch";
  CHECK_FALSE(store->Insert(bad_kind).ok());
  CHECK_FALSE(store->List({{"BOGUS"}, 0}).ok());
}

TEST_CASE("JobStore runs and finishes a job") {
  TempDir dir;
  std::unique_ptr<JobStore> store = OpenOrDie(dir.path() + "/jobs.db");
  JobRecord in = Job("j");
  in.reason = "Resources";
  int64_t id = InsertOrDie(store.get(), in);
  REQUIRE(store->MarkRunning(id, 555, 1700000010.0).ok());
  JobRecord r = GetOrDie(store.get(), id);
  CHECK(r.state == "RUNNING");
  CHECK(r.pid == 555);
  CHECK(r.start_time == 1700000010.0);
  CHECK(r.reason.empty());

  REQUIRE(store->UpdateUsage(id, 3.0, 1.0, 1024).ok());
  r = GetOrDie(store.get(), id);
  CHECK(r.lease_seconds == 3.0);
  CHECK(r.wait_seconds == 1.0);
  CHECK(r.peak_bytes == 1024);

  REQUIRE(store->Finish(id, "FAILED", 1, std::nullopt, 1700000020.0, 8.0, 2.0, 4096).ok());
  r = GetOrDie(store.get(), id);
  CHECK(r.state == "FAILED");
  CHECK(r.exit_code == 1);
  CHECK_FALSE(r.signal.has_value());
  CHECK(r.end_time == 1700000020.0);
  CHECK(r.lease_seconds == 8.0);
  CHECK(r.wait_seconds == 2.0);
  CHECK(r.peak_bytes == 4096);

  CHECK_FALSE(store->Finish(id, "RUNNING", 0, std::nullopt, 0, 0, 0, 0).ok());
  CHECK_FALSE(store->Finish(777, "COMPLETED", 0, std::nullopt, 0, 0, 0, 0).ok());
  CHECK_FALSE(store->MarkRunning(777, 1, 0).ok());
  CHECK_FALSE(store->UpdateUsage(777, 0, 0, 0).ok());
}

TEST_CASE("JobStore lists newest first, filtered by state and limited") {
  TempDir dir;
  std::unique_ptr<JobStore> store = OpenOrDie(dir.path() + "/jobs.db");
  int64_t a = InsertOrDie(store.get(), Job("a", "PENDING"));
  int64_t b = InsertOrDie(store.get(), Job("b", "RUNNING"));
  int64_t c = InsertOrDie(store.get(), Job("c", "COMPLETED"));
  int64_t d = InsertOrDie(store.get(), Job("d", "PENDING"));

  auto ids = [&](const ListFilter& f) {
    Result<std::vector<JobRecord>> rows = store->List(f);
    REQUIRE_MESSAGE(rows.ok(), rows.status().message());
    std::vector<int64_t> out;
    for (const JobRecord& r : rows.value()) out.push_back(r.id);
    return out;
  };
  CHECK(ids({}) == std::vector<int64_t>{d, c, b, a});
  CHECK(ids({{}, 2}) == std::vector<int64_t>{d, c});
  CHECK(ids({{"PENDING"}, 0}) == std::vector<int64_t>{d, a});
  CHECK(ids({{"PENDING", "RUNNING"}, 0}) == std::vector<int64_t>{d, b, a});
  CHECK(ids({{"PENDING", "RUNNING"}, 1}) == std::vector<int64_t>{d});
  CHECK(ids({{"TIMEOUT"}, 0}).empty());
  CHECK(GetOrDie(store.get(), c).name == "c");  // cached statements stay usable
}

TEST_CASE("JobStore marks RUNNING jobs LOST") {
  TempDir dir;
  std::unique_ptr<JobStore> store = OpenOrDie(dir.path() + "/jobs.db");
  int64_t pending = InsertOrDie(store.get(), Job("p"));
  int64_t run1 = InsertOrDie(store.get(), Job("r1"));
  int64_t run2 = InsertOrDie(store.get(), Job("r2"));
  REQUIRE(store->MarkRunning(run1, 10, 1.0).ok());
  REQUIRE(store->MarkRunning(run2, 11, 2.0).ok());
  Result<int> lost = store->MarkRunningAsLost(99.0);
  REQUIRE(lost.ok());
  CHECK(lost.value() == 2);
  CHECK(GetOrDie(store.get(), run1).state == "LOST");
  CHECK(GetOrDie(store.get(), run2).end_time == 99.0);
  CHECK(GetOrDie(store.get(), pending).state == "PENDING");
  CHECK_FALSE(GetOrDie(store.get(), pending).end_time.has_value());
  CHECK(store->MarkRunningAsLost(100.0).value() == 0);
}

TEST_CASE("JobStore reopens with its data, schema version and WAL") {
  TempDir dir;
  std::string path = dir.path() + "/state/sub/jobs.db";
  int64_t id;
  {
    std::unique_ptr<JobStore> store = OpenOrDie(path);
    id = InsertOrDie(store.get(), Job("kept"));
  }
  struct stat st;
  REQUIRE(stat((dir.path() + "/state/sub").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  std::unique_ptr<JobStore> store = OpenOrDie(path);
  CHECK(GetOrDie(store.get(), id).name == "kept");
  CHECK(InsertOrDie(store.get(), Job("next")) > id);
  CHECK(Pragma(path, "user_version") == std::to_string(JobStore::SchemaVersion()));
  CHECK(Pragma(path, "journal_mode") == "wal");
}

TEST_CASE("JobStore refuses a newer schema and a file that is not a database") {
  TempDir dir;
  std::string path = dir.path() + "/jobs.db";
  OpenOrDie(path);
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "PRAGMA user_version = 999", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  Result<std::unique_ptr<JobStore>> newer = JobStore::Open(path);
  REQUIRE_FALSE(newer.ok());
  CHECK(newer.status().message().find("999") != std::string::npos);

  std::string junk = dir.path() + "/junk.db";
  std::ofstream(junk) << std::string(8192, 'x');
  Result<std::unique_ptr<JobStore>> bad = JobStore::Open(junk);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find(junk) != std::string::npos);
  CHECK(bad.status().message().find("not a database") != std::string::npos);
}

TEST_CASE("JobStore in a read-only directory gives an error Status") {
  TempDir dir;
  std::string ro = dir.path() + "/ro";
  REQUIRE(mkdir(ro.c_str(), 0555) == 0);
  REQUIRE(chmod(dir.path().c_str(), 0755) == 0);
  // root ignores permissions: test as nobody when we may, else in /proc, which refuses files.
  bool dropped = geteuid() == 0 && seteuid(65534) == 0;
  std::vector<std::string> paths = {ro + "/jobs.db", ro + "/sub/jobs.db"};
  if (geteuid() == 0) paths = {"/proc/gshare-test.db", "/proc/gshare-test/jobs.db"};
  std::vector<Result<std::unique_ptr<JobStore>>> results;
  for (const std::string& p : paths) results.push_back(JobStore::Open(p));
  if (dropped) REQUIRE(seteuid(0) == 0);
  for (size_t i = 0; i < paths.size(); ++i) {
    INFO(paths[i]);
    REQUIRE_FALSE(results[i].ok());
    CHECK(results[i].status().message().find(paths[i]) != std::string::npos);
  }
}

}  // namespace
}  // namespace gshare
