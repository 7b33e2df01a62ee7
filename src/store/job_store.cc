#include "store/job_store.h"

#include "store/database_file.h"
#include "store/job_row.h"

#include <sqlite3.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

namespace gshare {
namespace {

using namespace job_row;  // NOLINT: the row codec is this file's vocabulary

// Schema migrations: kMigrations[i] takes the database from user_version i to i + 1.
// Append only; never edit a released entry. No CHECK on state, so a later version can add
// states without rebuilding the table (SQLite cannot alter a CHECK).
constexpr const char* kMigrations[] = {
    // 1: the jobs table.
    "CREATE TABLE jobs ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL DEFAULT '',"
    "  argv TEXT NOT NULL DEFAULT '[]', cwd TEXT NOT NULL DEFAULT '', uid INTEGER NOT NULL,"
    "  priority INTEGER NOT NULL DEFAULT 0, quantum_ms INTEGER NOT NULL DEFAULT 0,"
    "  gpu TEXT NOT NULL DEFAULT '', state TEXT NOT NULL, reason TEXT NOT NULL DEFAULT '',"
    "  submit_time REAL NOT NULL, start_time REAL, end_time REAL,"
    "  exit_code INTEGER, signal INTEGER, pid INTEGER,"
    "  lease_seconds REAL NOT NULL DEFAULT 0, wait_seconds REAL NOT NULL DEFAULT 0,"
    "  peak_bytes INTEGER NOT NULL DEFAULT 0, kind TEXT NOT NULL);"
    "CREATE INDEX jobs_by_state ON jobs(state);",
    // 2: the batch queue: job options, the runner's identity, payloads in their own table.
    "ALTER TABLE jobs ADD COLUMN output TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE jobs ADD COLUMN time_limit_ms INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN kill_after_ms INTEGER NOT NULL DEFAULT 30000;"
    "ALTER TABLE jobs ADD COLUMN dependency TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE jobs ADD COLUMN held INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN begin_time REAL;"
    "ALTER TABLE jobs ADD COLUMN end_request TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE jobs ADD COLUMN runner_pid INTEGER;"
    "ALTER TABLE jobs ADD COLUMN runner_start INTEGER;"
    "ALTER TABLE jobs ADD COLUMN slot TEXT NOT NULL DEFAULT '';"
    "CREATE TABLE job_payloads (job_id INTEGER PRIMARY KEY, env TEXT NOT NULL DEFAULT '[]',"
    "  script TEXT);"
    "CREATE INDEX jobs_by_name ON jobs(name);",
    // 3: pending jobs in admission order straight from an index (`gshare queue`).
    "CREATE INDEX jobs_by_queue_order ON jobs(state, priority DESC, submit_time, id);",
    // 4: the memory engine a job runs with (`--memory`).
    "ALTER TABLE jobs ADD COLUMN memory TEXT NOT NULL DEFAULT '';",
    // 5: the client's key of a submission, so that a retried submit finds its job.
    "ALTER TABLE job_payloads ADD COLUMN submit_key TEXT;"
    "CREATE UNIQUE INDEX job_payloads_by_submit_key ON job_payloads(submit_key)"
    "  WHERE submit_key IS NOT NULL;",
    // 6: the job's secret, proof that a process joining it belongs to it.
    "ALTER TABLE jobs ADD COLUMN token TEXT NOT NULL DEFAULT '';",
    // 7: how many GPUs a job uses at once (--gpus).
    "ALTER TABLE jobs ADD COLUMN gpus INTEGER NOT NULL DEFAULT 1;",
    // 8: job arrays (`submit --array`); the index tells clean whether a payload is still needed.
    "ALTER TABLE jobs ADD COLUMN array_job_id INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN array_task_id INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN array_task_count INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN array_task_min INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN array_task_max INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN array_limit INTEGER NOT NULL DEFAULT 0;"
    "CREATE INDEX jobs_by_array ON jobs(array_job_id);",
    // 9: accounting (`gshare acct`): each job's swaps and restarts, and the earlier runs of
    // requeued jobs, each with when it was requeued (the next run's submission for acct).
    "ALTER TABLE jobs ADD COLUMN swaps_out INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN swaps_in INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN restarts INTEGER NOT NULL DEFAULT 0;"
    "CREATE TABLE job_runs (job_id INTEGER NOT NULL, run INTEGER NOT NULL,"
    "  state TEXT NOT NULL, requeued INTEGER NOT NULL DEFAULT 0, reason TEXT NOT NULL DEFAULT '',"
    "  submit_time REAL NOT NULL, start_time REAL, end_time REAL, exit_code INTEGER,"
    "  signal INTEGER, lease_seconds REAL NOT NULL DEFAULT 0,"
    "  wait_seconds REAL NOT NULL DEFAULT 0, peak_bytes INTEGER NOT NULL DEFAULT 0,"
    "  swaps_out INTEGER NOT NULL DEFAULT 0, swaps_in INTEGER NOT NULL DEFAULT 0,"
    "  slot TEXT NOT NULL DEFAULT '', requeue_time REAL NOT NULL,"
    "  PRIMARY KEY (job_id, run)) WITHOUT ROWID;",
    // 10: the GPU timeline (`gshare timeline`): lease grants, drops, releases, swaps,
    // checkpoints per GPU and job, in the order the daemon recorded them; times in unix
    // microseconds. The owner is kept with each event: the job's row may be gone.
    "CREATE TABLE timeline (id INTEGER PRIMARY KEY, time_us INTEGER NOT NULL,"
    "  kind TEXT NOT NULL, gpu TEXT NOT NULL DEFAULT '', job_id INTEGER NOT NULL DEFAULT 0,"
    "  uid INTEGER NOT NULL DEFAULT 0, pid INTEGER NOT NULL DEFAULT 0,"
    "  bytes INTEGER NOT NULL DEFAULT 0, ms REAL NOT NULL DEFAULT 0,"
    "  detail TEXT NOT NULL DEFAULT '');"
    "CREATE INDEX timeline_by_time ON timeline(time_us);",
    // 11: jobs that Slurm started (kind "slurm", `gshare slurm task-prolog`): their Slurm job
    // id and step ("0", "batch"), 0 and "" for every other job.
    "ALTER TABLE jobs ADD COLUMN slurm_job_id INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN slurm_step TEXT NOT NULL DEFAULT '';",
    // 12: --mail-user and --mail-type, for the [notify] command.
    "ALTER TABLE jobs ADD COLUMN mail_user TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE jobs ADD COLUMN mail_type TEXT NOT NULL DEFAULT '';",
    // 13: -e/--error, --open-mode and --signal.
    "ALTER TABLE jobs ADD COLUMN error TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE jobs ADD COLUMN open_append INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN warn_signal INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN warn_ms INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE jobs ADD COLUMN warn_main_only INTEGER NOT NULL DEFAULT 0;",
};
constexpr int kSchemaVersion = sizeof kMigrations / sizeof kMigrations[0];

// The daemon is the only writer, but `sqlite3` shell readers may hold a lock briefly.
constexpr int kBusyTimeoutMs = 5000;

}  // namespace

void JobStore::StatementDeleter::operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }

int JobStore::SchemaVersion() { return kSchemaVersion; }

Result<std::unique_ptr<JobStore>> JobStore::Open(const std::string& path) {
  Status ready = PrepareDatabaseFile(path, [](const std::string& fresh) {
    Result<std::unique_ptr<JobStore>> made = OpenFile(fresh);
    return made.ok() ? Status::Ok() : made.status();  // closed: its WAL folded into the file
  });
  if (!ready.ok()) return ready;
  return OpenFile(path);
}

Result<std::unique_ptr<JobStore>> JobStore::OpenFile(const std::string& path) {
  const size_t slash = path.rfind('/');
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    // sqlite retries read-only after a failed create, so its errno may say ENOENT where the
    // real cause is an unwritable directory: name that first.
    std::string dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
    int err = db != nullptr ? sqlite3_system_errno(db) : 0;
    if (faccessat(AT_FDCWD, dir.c_str(), W_OK | X_OK, AT_EACCESS) != 0) {
      message += " (" + dir + ": " + std::strerror(errno) + ")";
    } else if (err != 0) {
      message += std::string(" (") + std::strerror(err) + ")";
    }
    sqlite3_close(db);
    return Status::Error("job store " + path + ": open: " + message);
  }
  std::unique_ptr<JobStore> store(new JobStore(db, path));
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, kBusyTimeoutMs);

  // journal_mode answers with the mode in effect, which stays "delete" where WAL is refused.
  Result<sqlite3_stmt*> wal = store->Prepare("PRAGMA journal_mode=WAL");
  if (!wal.ok()) return wal.status();
  {
    ResetOnExit reset{wal.value()};
    if (sqlite3_step(wal.value()) != SQLITE_ROW) return store->Error("enable WAL");
    std::string mode = ColumnText(wal.value(), 0);
    if (mode != "wal") {
      return Status::Error("job store " + path + ": cannot enable WAL (journal mode is " + mode +
                           ")");
    }
  }
  Status st = store->Exec("PRAGMA synchronous=NORMAL");
  if (st.ok()) st = store->Migrate();
  if (!st.ok()) return st;
  return store;
}

JobStore::~JobStore() {
  statements_.clear();  // finalized before the connection closes
  sqlite3_close(db_);
}

Status JobStore::Error(std::string_view what) const {
  std::string message = sqlite3_errmsg(db_);
  int err = sqlite3_system_errno(db_);
  int code = sqlite3_errcode(db_) & 0xff;  // errno means something only for I/O failures
  if (err != 0 && (code == SQLITE_CANTOPEN || code == SQLITE_IOERR)) {
    message += std::string(" (") + std::strerror(err) + ")";
  }
  return Status::Error("job store " + path_ + ": " + std::string(what) + ": " + message);
}

Status JobStore::Exec(const char* sql) {
  if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return Error(sql);
  return Status::Ok();
}

Result<sqlite3_stmt*> JobStore::Prepare(const std::string& sql) {
  auto it = statements_.find(sql);
  if (it != statements_.end()) {
    sqlite3_reset(it->second.get());
    sqlite3_clear_bindings(it->second.get());
    return it->second.get();
  }
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db_, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr) !=
      SQLITE_OK) {
    return Error("prepare " + sql);
  }
  statements_.emplace(sql, StatementPtr(stmt));
  return stmt;
}

Status JobStore::Step(sqlite3_stmt* stmt, const char* what, int* changes) {
  ResetOnExit reset{stmt};
  if (sqlite3_step(stmt) != SQLITE_DONE) return Error(what);
  if (changes != nullptr) *changes = sqlite3_changes(db_);
  return Status::Ok();
}

Result<int> JobStore::ReadSchemaVersion() {
  Result<sqlite3_stmt*> stmt = Prepare("PRAGMA user_version");
  if (!stmt.ok()) return stmt.status();
  ResetOnExit reset{stmt.value()};
  if (sqlite3_step(stmt.value()) != SQLITE_ROW) return Error("read schema version");
  return sqlite3_column_int(stmt.value(), 0);
}

Result<std::unique_ptr<JobStore>> JobStore::OpenReadOnly(const std::string& path) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return Status::Error("job store " + path + ": open: " + message);
  }
  std::unique_ptr<JobStore> store(new JobStore(db, path));
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  Result<int> version = store->ReadSchemaVersion();
  if (!version.ok()) return version.status();
  if (version.value() != kSchemaVersion) {
    return Status::Error("job store " + path + ": schema version " +
                         std::to_string(version.value()) + ", this gshare reads " +
                         std::to_string(kSchemaVersion));
  }
  return store;
}

Status JobStore::Migrate() {
  // One write transaction for the check and every step, so a crash leaves the old version.
  Status st = Exec("BEGIN IMMEDIATE");
  if (!st.ok()) return st;
  auto fail = [this](Status error) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return error;
  };
  Result<int> read = ReadSchemaVersion();
  if (!read.ok()) return fail(read.status());
  const int version = read.value();
  if (version > kSchemaVersion) {
    return fail(Status::Error("job store " + path_ + ": schema version " + std::to_string(version) +
                              " is newer than this gshare knows (" +
                              std::to_string(kSchemaVersion) + ")"));
  }
  for (int v = version; v < kSchemaVersion; ++v) {
    st = Exec(kMigrations[v]);
    // PRAGMA takes no bound parameters; the number is ours.
    if (st.ok()) st = Exec(("PRAGMA user_version = " + std::to_string(v + 1)).c_str());
    if (!st.ok()) return fail(st);
  }
  st = Exec("COMMIT");
  if (!st.ok()) return fail(st);
  return Status::Ok();
}

Result<int64_t> JobStore::InsertRow(const JobRecord& r) {
  std::string values;
  for (int i = 1; i <= NumWritable(); ++i) values += (i > 1 ? ", ?" : "?") + std::to_string(i);
  Result<sqlite3_stmt*> prepared =
      Prepare("INSERT INTO jobs (" + WritableColumnList() + ") VALUES (" + values + ")");
  if (!prepared.ok()) return prepared.status();
  BindRecord(prepared.value(), r);
  Status st = Step(prepared.value(), "insert job", nullptr);
  if (!st.ok()) return st;
  return static_cast<int64_t>(sqlite3_last_insert_rowid(db_));
}

Status JobStore::InsertPayload(int64_t id, const JobPayload& payload) {
  Result<sqlite3_stmt*> p =
      Prepare("INSERT INTO job_payloads (job_id, env, script, submit_key) VALUES (?1, ?2, ?3, ?4)");
  if (!p.ok()) return p.status();
  sqlite3_bind_int64(p.value(), 1, id);
  BindText(p.value(), 2, StringsToJson(payload.env));
  if (payload.script)
    BindText(p.value(), 3, *payload.script);
  else
    sqlite3_bind_null(p.value(), 3);
  if (!payload.submit_key.empty())
    BindText(p.value(), 4, payload.submit_key);
  else
    sqlite3_bind_null(p.value(), 4);
  return Step(p.value(), "insert job payload", nullptr);
}

Result<int64_t> JobStore::Insert(const JobRecord& r, const JobPayload* payload) {
  if (payload == nullptr) return InsertRow(r);
  // The row and its payload commit together: a crash between them must not leave a job
  // without its environment.
  Status st = Exec("BEGIN IMMEDIATE");
  if (!st.ok()) return st;
  Result<int64_t> id = InsertRow(r);
  st = id.ok() ? InsertPayload(id.value(), *payload) : id.status();
  if (st.ok()) st = Exec("COMMIT");
  if (!st.ok()) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return st;
  }
  return id.value();
}

Status JobStore::InsertArray(std::vector<JobRecord>* tasks, const JobPayload& payload) {
  if (tasks->empty()) return Status::Error("a job array without tasks");
  Status st = Exec("BEGIN IMMEDIATE");
  if (!st.ok()) return st;
  int64_t array_id = 0;
  for (JobRecord& t : *tasks) {
    // The first task's id is the array's: known once it is inserted, then written back.
    t.array_job_id = array_id != 0 ? array_id : -1;
    Result<int64_t> id = InsertRow(t);
    if (!id.ok()) {
      st = id.status();
      break;
    }
    t.id = id.value();
    if (array_id == 0) {
      array_id = t.id;
      t.array_job_id = array_id;
      st = Save(t);
      if (st.ok()) st = InsertPayload(array_id, payload);
      if (!st.ok()) break;
    }
  }
  if (st.ok()) st = Exec("COMMIT");
  if (!st.ok()) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    for (JobRecord& t : *tasks) t.id = t.array_job_id = 0;
    return st;
  }
  return Status::Ok();
}

Status JobStore::Save(const JobRecord& r) {
  std::string sets;
  for (int i = 0; i < NumWritable(); ++i) {
    sets += std::string(i > 0 ? ", " : "") + WritableColumn(i) + " = ?" + std::to_string(i + 1);
  }
  Result<sqlite3_stmt*> s =
      Prepare("UPDATE jobs SET " + sets + " WHERE id = ?" + std::to_string(NumWritable() + 1));
  if (!s.ok()) return s.status();
  BindRecord(s.value(), r);
  sqlite3_bind_int64(s.value(), NumWritable() + 1, r.id);
  int changes = 0;
  Status st = Step(s.value(), "save job", &changes);
  if (st.ok() && changes == 0) return Status::Error("no job " + std::to_string(r.id));
  return st;
}

Result<JobPayload> JobStore::GetPayload(int64_t id) {
  Result<sqlite3_stmt*> s = Prepare("SELECT env, script FROM job_payloads WHERE job_id = ?1");
  if (!s.ok()) return s.status();
  ResetOnExit reset{s.value()};
  sqlite3_bind_int64(s.value(), 1, id);
  JobPayload payload;
  int rc = sqlite3_step(s.value());
  if (rc == SQLITE_DONE) return payload;
  if (rc != SQLITE_ROW) return Error("get job payload");
  nlohmann::json env = nlohmann::json::parse(ColumnText(s.value(), 0), nullptr, false);
  if (!env.is_array())
    return Status::Error("job " + std::to_string(id) + ": env is not a JSON array");
  for (const nlohmann::json& e : env) {
    if (e.is_string()) payload.env.push_back(e.get<std::string>());
  }
  if (sqlite3_column_type(s.value(), 1) != SQLITE_NULL) payload.script = ColumnText(s.value(), 1);
  return payload;
}

Result<std::optional<int64_t>> JobStore::FindBySubmitKey(const std::string& key) {
  Result<sqlite3_stmt*> s = Prepare("SELECT job_id FROM job_payloads WHERE submit_key = ?1");
  if (!s.ok()) return s.status();
  ResetOnExit reset{s.value()};
  BindText(s.value(), 1, key);
  int rc = sqlite3_step(s.value());
  if (rc == SQLITE_DONE) return std::optional<int64_t>();
  if (rc != SQLITE_ROW) return Error("find a submission");
  return std::optional<int64_t>(sqlite3_column_int64(s.value(), 0));
}

Status JobStore::SetReasons(const std::vector<std::pair<int64_t, std::string>>& reasons) {
  if (reasons.empty()) return Status::Ok();
  Status st = Exec("BEGIN IMMEDIATE");
  if (!st.ok()) return st;
  for (const auto& [id, reason] : reasons) {
    Result<sqlite3_stmt*> s = Prepare("UPDATE jobs SET reason = ?2 WHERE id = ?1");
    if (!s.ok()) {
      st = s.status();
      break;
    }
    sqlite3_bind_int64(s.value(), 1, id);
    BindText(s.value(), 2, reason);
    st = Step(s.value(), "set job reason", nullptr);
    if (!st.ok()) break;
  }
  if (st.ok()) st = Exec("COMMIT");
  if (!st.ok()) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  return st;
}

Status JobStore::FailUnreadable(int64_t id, double end_time, const std::string& reason) {
  Result<sqlite3_stmt*> s =
      Prepare("UPDATE jobs SET state = 'FAILED', end_time = ?2, reason = ?3 WHERE id = ?1");
  if (!s.ok()) return s.status();
  sqlite3_bind_int64(s.value(), 1, id);
  sqlite3_bind_double(s.value(), 2, end_time);
  BindText(s.value(), 3, reason);
  return Step(s.value(), "fail an unreadable job", nullptr);
}

Result<std::vector<JobRecord>> JobStore::DeleteEnded(double ended_before, size_t keep_newest,
                                                     const std::set<int64_t>& keep,
                                                     std::optional<uint32_t> owner) {
  ListFilter ended;
  ended.uid = owner;
  for (JobState state : kAllJobStates) {
    if (IsFinal(state)) ended.states.insert(state);
  }
  Result<std::vector<JobRecord>> rows = List(ended);
  if (!rows.ok()) return rows.status();
  // Last to end first, so that the first `keep_newest` rows are the ones kept by count.
  std::stable_sort(rows->begin(), rows->end(), [](const JobRecord& a, const JobRecord& b) {
    return a.end_time.value_or(0) > b.end_time.value_or(0);
  });
  std::vector<JobRecord> deleted;
  Status st = Exec("BEGIN IMMEDIATE");
  if (!st.ok()) return st;
  size_t newer = 0;
  for (JobRecord& r : rows.value()) {
    const bool recent = newer++ < keep_newest && r.end_time.value_or(0) >= ended_before;
    if (keep.count(r.id) != 0 || recent) continue;
    // An array's payload goes with the last of its tasks, whichever that is.
    const std::pair<const char*, int64_t> steps[] = {
        {"DELETE FROM jobs WHERE id = ?1", r.id},
        {"DELETE FROM job_runs WHERE job_id = ?1", r.id},
        {"DELETE FROM job_payloads WHERE job_id = ?1 AND"
         " NOT EXISTS (SELECT 1 FROM jobs WHERE array_job_id = ?1)",
         PayloadIdOf(r)}};
    for (const auto& [sql, id] : steps) {
      Result<sqlite3_stmt*> s = Prepare(sql);
      if (!s.ok()) {
        st = s.status();
        break;
      }
      sqlite3_bind_int64(s.value(), 1, id);
      st = Step(s.value(), "delete job", nullptr);
      if (!st.ok()) break;
    }
    if (!st.ok()) break;
    deleted.push_back(std::move(r));
  }
  if (st.ok()) st = Exec("COMMIT");
  if (!st.ok()) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return st;
  }
  return deleted;
}

}  // namespace gshare
