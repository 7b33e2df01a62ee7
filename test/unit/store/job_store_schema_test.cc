// JobStore's file: a schema 1 database migrated with its jobs, the schema version and WAL
// kept on reopening, and what it refuses (a newer schema, a file that is not SQLite's, an
// empty one, a directory it cannot write) without touching it.
#include <doctest/doctest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "store/job_store.h"
#include "store_test_util.h"
#include "temp_dir.h"

namespace gshare::unit_job_store_schema {
namespace {

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

TEST_CASE("JobStore migrates a schema 1 database, keeping its jobs") {
  TempDir dir;
  const std::string path = dir.path() + "/jobs.db";
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  // Schema 1 as the first release wrote it.
  REQUIRE(
      sqlite3_exec(db,
                   "CREATE TABLE jobs (id INTEGER PRIMARY KEY AUTOINCREMENT,"
                   " name TEXT NOT NULL DEFAULT '', argv TEXT NOT NULL DEFAULT '[]',"
                   " cwd TEXT NOT NULL DEFAULT '', uid INTEGER NOT NULL,"
                   " priority INTEGER NOT NULL DEFAULT 0, quantum_ms INTEGER NOT NULL DEFAULT 0,"
                   " gpu TEXT NOT NULL DEFAULT '', state TEXT NOT NULL,"
                   " reason TEXT NOT NULL DEFAULT '', submit_time REAL NOT NULL,"
                   " start_time REAL, end_time REAL, exit_code INTEGER, signal INTEGER,"
                   " pid INTEGER, lease_seconds REAL NOT NULL DEFAULT 0,"
                   " wait_seconds REAL NOT NULL DEFAULT 0, peak_bytes INTEGER NOT NULL DEFAULT 0,"
                   " kind TEXT NOT NULL);"
                   "CREATE INDEX jobs_by_state ON jobs(state);"
                   "INSERT INTO jobs (name, argv, uid, state, submit_time, exit_code, kind)"
                   " VALUES ('old', '[\"a\"]', 1000, 'COMPLETED', 5.0, 0, 'run');"
                   "PRAGMA user_version = 1;",
                   nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  std::unique_ptr<JobStore> store = OpenOrDie(path);
  CHECK(Pragma(path, "user_version") == std::to_string(JobStore::SchemaVersion()));
  JobRecord old = GetOrDie(store.get(), 1);
  CHECK(old.name == "old");
  CHECK(old.exit_code == 0);
  CHECK(old.kill_after_ms == 30'000);
  CHECK(old.dependency.empty());
  CHECK_FALSE(old.held);
  CHECK_FALSE(old.IsArrayTask());  // schema 8's columns read 0
  CHECK(old.array_limit == 0);
}

TEST_CASE("JobStore reopens with its data, schema version and WAL") {
  TempDir dir;
  std::string path = dir.path() + "/state/sub/jobs.db";
  int64_t id;
  {
    std::unique_ptr<JobStore> store = OpenOrDie(path);
    id = InsertOrDie(store.get(), SampleJob("kept"));
  }
  struct stat st;
  REQUIRE(stat((dir.path() + "/state/sub").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  std::unique_ptr<JobStore> store = OpenOrDie(path);
  CHECK(GetOrDie(store.get(), id).name == "kept");
  CHECK(InsertOrDie(store.get(), SampleJob("next")) > id);
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

TEST_CASE("hostile store: an empty or foreign file is refused and left as it is") {
  TempDir dir;
  const std::string empty = dir.path() + "/empty.db";
  std::ofstream(empty).close();
  Result<std::unique_ptr<JobStore>> opened = JobStore::Open(empty);
  REQUIRE_FALSE(opened.ok());
  const std::string& m = opened.status().message();
  CHECK(m.find("job store " + empty + ": not a database") == 0);
  CHECK(m.find("empty (0 bytes)") != std::string::npos);
  CHECK(std::filesystem::file_size(empty) == 0);  // not turned into an empty queue

  const std::string text = dir.path() + "/text.db";
  std::ofstream(text) << "id,name\n1,train\n";
  opened = JobStore::Open(text);
  REQUIRE_FALSE(opened.ok());
  CHECK(opened.status().message().find("SQLite's header") != std::string::npos);

  REQUIRE(mkdir((dir.path() + "/dir.db").c_str(), 0700) == 0);
  CHECK_FALSE(JobStore::Open(dir.path() + "/dir.db").ok());

  // A missing file is a fresh queue, made without an empty file ever standing at its path.
  const std::string fresh = dir.path() + "/fresh.db";
  {
    std::unique_ptr<JobStore> store = OpenOrDie(fresh);
    CHECK(store->List(ListFilter{}).value().empty());
  }
  CHECK(std::filesystem::file_size(fresh) > 0);
  CHECK_FALSE(std::filesystem::exists(fresh + ".new"));
  CHECK(JobStore::Open(fresh).ok());
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
}  // namespace gshare::unit_job_store_schema
