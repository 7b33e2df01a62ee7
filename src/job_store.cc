#include "job_store.h"

#include <sqlite3.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

namespace gshare {
namespace {

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
};
constexpr int kSchemaVersion = sizeof kMigrations / sizeof kMigrations[0];

// The daemon is the only writer, but `sqlite3` shell readers may hold a lock briefly.
constexpr int kBusyTimeoutMs = 5000;

constexpr const char* kColumns =
    "id, name, argv, cwd, uid, priority, quantum_ms, gpu, state, reason, submit_time, start_time,"
    " end_time, exit_code, signal, pid, lease_seconds, wait_seconds, peak_bytes, kind";

// Resets a cached statement when leaving scope: a SELECT left un-reset would keep its read
// transaction open and stop WAL checkpoints.
struct ResetOnExit {
  sqlite3_stmt* stmt;
  ~ResetOnExit() { sqlite3_reset(stmt); }
};

// Creates each missing directory of `dir` with mode 0700 (existing ones are left as they are).
Status MakeDirs(const std::string& dir) {
  for (size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
    std::string prefix = dir.substr(0, slash);
    if (!prefix.empty() && mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return Status::Error("cannot create directory " + prefix + ": " + std::strerror(errno));
    }
    if (slash == std::string::npos) return Status::Ok();
  }
}

void BindOptional(sqlite3_stmt* stmt, int index, const std::optional<int>& v) {
  if (v) sqlite3_bind_int64(stmt, index, *v);
  else sqlite3_bind_null(stmt, index);
}

void BindOptional(sqlite3_stmt* stmt, int index, const std::optional<double>& v) {
  if (v) sqlite3_bind_double(stmt, index, *v);
  else sqlite3_bind_null(stmt, index);
}

void BindText(sqlite3_stmt* stmt, int index, const std::string& v) {
  sqlite3_bind_text(stmt, index, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}

int64_t ClampBytes(uint64_t bytes) {
  constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  return static_cast<int64_t>(bytes > kMax ? kMax : bytes);
}

std::string ColumnText(sqlite3_stmt* stmt, int col) {
  const unsigned char* text = sqlite3_column_text(stmt, col);
  if (text == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(sqlite3_column_bytes(stmt, col)));
}

template <typename T>
std::optional<T> ColumnOptional(sqlite3_stmt* stmt, int col) {
  if (sqlite3_column_type(stmt, col) == SQLITE_NULL) return std::nullopt;
  if constexpr (std::is_floating_point_v<T>) return sqlite3_column_double(stmt, col);
  else return static_cast<T>(sqlite3_column_int64(stmt, col));
}

// The row under `stmt`, whose columns are kColumns.
Result<JobRecord> ReadRow(sqlite3_stmt* stmt) {
  JobRecord r;
  r.id = sqlite3_column_int64(stmt, 0);
  r.name = ColumnText(stmt, 1);
  // Not the throwing parse: a hand-edited row must give an error, not an exception.
  nlohmann::json argv = nlohmann::json::parse(ColumnText(stmt, 2), nullptr, false);
  if (!argv.is_array()) {
    return Status::Error("job " + std::to_string(r.id) + ": argv is not a JSON array");
  }
  for (const nlohmann::json& arg : argv) {
    if (!arg.is_string()) {
      return Status::Error("job " + std::to_string(r.id) + ": argv holds a non-string");
    }
    r.argv.push_back(arg.get<std::string>());
  }
  r.cwd = ColumnText(stmt, 3);
  r.uid = static_cast<uint32_t>(sqlite3_column_int64(stmt, 4));
  r.priority = sqlite3_column_int(stmt, 5);
  r.quantum_ms = sqlite3_column_int64(stmt, 6);
  r.gpu = ColumnText(stmt, 7);
  r.state = ColumnText(stmt, 8);
  r.reason = ColumnText(stmt, 9);
  r.submit_time = sqlite3_column_double(stmt, 10);
  r.start_time = ColumnOptional<double>(stmt, 11);
  r.end_time = ColumnOptional<double>(stmt, 12);
  r.exit_code = ColumnOptional<int>(stmt, 13);
  r.signal = ColumnOptional<int>(stmt, 14);
  r.pid = ColumnOptional<int>(stmt, 15);
  r.lease_seconds = sqlite3_column_double(stmt, 16);
  r.wait_seconds = sqlite3_column_double(stmt, 17);
  r.peak_bytes = static_cast<uint64_t>(sqlite3_column_int64(stmt, 18));
  r.kind = ColumnText(stmt, 19);
  return r;
}

}  // namespace

bool IsJobState(std::string_view state) {
  for (const char* s : kJobStates) {
    if (state == s) return true;
  }
  return false;
}

bool IsFinalJobState(std::string_view state) {
  return state == "COMPLETED" || state == "FAILED" || state == "CANCELLED" ||
         state == "TIMEOUT" || state == "LOST";
}

void JobStore::StatementDeleter::operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }

int JobStore::SchemaVersion() { return kSchemaVersion; }

Result<std::unique_ptr<JobStore>> JobStore::Open(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    Status st = MakeDirs(path.substr(0, slash));
    if (!st.ok()) return Status::Error("job store " + path + ": " + st.message());
  }
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                           nullptr);
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

Status JobStore::Migrate() {
  // One write transaction for the check and every step, so a crash leaves the old version.
  Status st = Exec("BEGIN IMMEDIATE");
  if (!st.ok()) return st;
  auto fail = [this](Status error) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return error;
  };
  int version = 0;
  {
    Result<sqlite3_stmt*> stmt = Prepare("PRAGMA user_version");
    if (!stmt.ok()) return fail(stmt.status());
    ResetOnExit reset{stmt.value()};
    if (sqlite3_step(stmt.value()) != SQLITE_ROW) return fail(Error("read schema version"));
    version = sqlite3_column_int(stmt.value(), 0);
  }
  if (version > kSchemaVersion) {
    return fail(Status::Error("job store " + path_ + ": schema version " +
                              std::to_string(version) + " is newer than this gshare knows (" +
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

Result<int64_t> JobStore::Insert(const JobRecord& r) {
  if (!IsJobState(r.state)) return Status::Error("unknown job state \"" + r.state + "\"");
  if (r.kind != "run" && r.kind != "submit") {
    return Status::Error("unknown job kind \"" + r.kind + "\" (run or submit)");
  }
  Result<sqlite3_stmt*> prepared = Prepare(
      "INSERT INTO jobs (name, argv, cwd, uid, priority, quantum_ms, gpu, state, reason,"
      " submit_time, start_time, end_time, exit_code, signal, pid, lease_seconds, wait_seconds,"
      " peak_bytes, kind) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
      " ?15, ?16, ?17, ?18, ?19)");
  if (!prepared.ok()) return prepared.status();
  sqlite3_stmt* s = prepared.value();
  // replace, not the default strict handler, which throws on invalid UTF-8.
  std::string argv = nlohmann::json(r.argv).dump(-1, ' ', false,
                                                 nlohmann::json::error_handler_t::replace);
  BindText(s, 1, r.name);
  BindText(s, 2, argv);
  BindText(s, 3, r.cwd);
  sqlite3_bind_int64(s, 4, r.uid);
  sqlite3_bind_int64(s, 5, r.priority);
  sqlite3_bind_int64(s, 6, r.quantum_ms);
  BindText(s, 7, r.gpu);
  BindText(s, 8, r.state);
  BindText(s, 9, r.reason);
  sqlite3_bind_double(s, 10, r.submit_time);
  BindOptional(s, 11, r.start_time);
  BindOptional(s, 12, r.end_time);
  BindOptional(s, 13, r.exit_code);
  BindOptional(s, 14, r.signal);
  BindOptional(s, 15, r.pid);
  sqlite3_bind_double(s, 16, r.lease_seconds);
  sqlite3_bind_double(s, 17, r.wait_seconds);
  sqlite3_bind_int64(s, 18, ClampBytes(r.peak_bytes));
  BindText(s, 19, r.kind);
  Status st = Step(s, "insert job", nullptr);
  if (!st.ok()) return st;
  return static_cast<int64_t>(sqlite3_last_insert_rowid(db_));
}

Status JobStore::MarkRunning(int64_t id, int pid, double start_time) {
  Result<sqlite3_stmt*> s = Prepare(
      "UPDATE jobs SET state = 'RUNNING', reason = '', pid = ?2, start_time = ?3 WHERE id = ?1");
  if (!s.ok()) return s.status();
  sqlite3_bind_int64(s.value(), 1, id);
  sqlite3_bind_int64(s.value(), 2, pid);
  sqlite3_bind_double(s.value(), 3, start_time);
  int changes = 0;
  Status st = Step(s.value(), "mark job running", &changes);
  if (st.ok() && changes == 0) return Status::Error("no job " + std::to_string(id));
  return st;
}

Status JobStore::Finish(int64_t id, std::string state, std::optional<int> exit_code,
                        std::optional<int> signal, double end_time, double lease_seconds,
                        double wait_seconds, uint64_t peak_bytes) {
  if (!IsFinalJobState(state)) {
    return Status::Error("job " + std::to_string(id) + " cannot finish in state \"" + state + "\"");
  }
  Result<sqlite3_stmt*> s = Prepare(
      "UPDATE jobs SET state = ?2, exit_code = ?3, signal = ?4, end_time = ?5,"
      " lease_seconds = ?6, wait_seconds = ?7, peak_bytes = ?8 WHERE id = ?1");
  if (!s.ok()) return s.status();
  sqlite3_bind_int64(s.value(), 1, id);
  BindText(s.value(), 2, state);
  BindOptional(s.value(), 3, exit_code);
  BindOptional(s.value(), 4, signal);
  sqlite3_bind_double(s.value(), 5, end_time);
  sqlite3_bind_double(s.value(), 6, lease_seconds);
  sqlite3_bind_double(s.value(), 7, wait_seconds);
  sqlite3_bind_int64(s.value(), 8, ClampBytes(peak_bytes));
  int changes = 0;
  Status st = Step(s.value(), "finish job", &changes);
  if (st.ok() && changes == 0) return Status::Error("no job " + std::to_string(id));
  return st;
}

Status JobStore::UpdateUsage(int64_t id, double lease_seconds, double wait_seconds,
                             uint64_t peak_bytes) {
  Result<sqlite3_stmt*> s = Prepare(
      "UPDATE jobs SET lease_seconds = ?2, wait_seconds = ?3, peak_bytes = ?4 WHERE id = ?1");
  if (!s.ok()) return s.status();
  sqlite3_bind_int64(s.value(), 1, id);
  sqlite3_bind_double(s.value(), 2, lease_seconds);
  sqlite3_bind_double(s.value(), 3, wait_seconds);
  sqlite3_bind_int64(s.value(), 4, ClampBytes(peak_bytes));
  int changes = 0;
  Status st = Step(s.value(), "update job usage", &changes);
  if (st.ok() && changes == 0) return Status::Error("no job " + std::to_string(id));
  return st;
}

Result<std::optional<JobRecord>> JobStore::Get(int64_t id) {
  Result<sqlite3_stmt*> s = Prepare(std::string("SELECT ") + kColumns + " FROM jobs WHERE id = ?1");
  if (!s.ok()) return s.status();
  ResetOnExit reset{s.value()};
  sqlite3_bind_int64(s.value(), 1, id);
  int rc = sqlite3_step(s.value());
  if (rc == SQLITE_DONE) return std::optional<JobRecord>();
  if (rc != SQLITE_ROW) return Error("get job");
  Result<JobRecord> row = ReadRow(s.value());
  if (!row.ok()) return row.status();
  return std::optional<JobRecord>(std::move(row.value()));
}

Result<std::vector<JobRecord>> JobStore::List(const ListFilter& filter) {
  // One cached statement per set size; states are bound, never spliced into the SQL.
  std::string sql = std::string("SELECT ") + kColumns + " FROM jobs";
  int index = 1;
  for (const std::string& state : filter.states) {
    if (!IsJobState(state)) return Status::Error("unknown job state \"" + state + "\"");
    sql += index == 1 ? " WHERE state IN (?" : ", ?";
    ++index;
  }
  if (!filter.states.empty()) sql += ")";
  sql += " ORDER BY id DESC LIMIT ?" + std::to_string(index);
  Result<sqlite3_stmt*> s = Prepare(sql);
  if (!s.ok()) return s.status();
  ResetOnExit reset{s.value()};
  index = 1;
  for (const std::string& state : filter.states) BindText(s.value(), index++, state);
  sqlite3_bind_int64(s.value(), index, filter.limit > 0 ? filter.limit : -1);  // -1: no limit
  std::vector<JobRecord> rows;
  while (true) {
    int rc = sqlite3_step(s.value());
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) return Error("list jobs");
    Result<JobRecord> row = ReadRow(s.value());
    if (!row.ok()) return row.status();
    rows.push_back(std::move(row.value()));
  }
  return rows;
}

Result<int> JobStore::MarkRunningAsLost(double now) {
  Result<sqlite3_stmt*> s =
      Prepare("UPDATE jobs SET state = 'LOST', end_time = ?1 WHERE state = 'RUNNING'");
  if (!s.ok()) return s.status();
  sqlite3_bind_double(s.value(), 1, now);
  int changes = 0;
  Status st = Step(s.value(), "mark running jobs lost", &changes);
  if (!st.ok()) return st;
  return changes;
}

}  // namespace gshare
