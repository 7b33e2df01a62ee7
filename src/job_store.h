// The daemon's SQLite database of jobs (DESIGN.md §6): one row per `run` or `submit` job.
// Written only by the daemon, through a single JobStore owned by one thread: a JobStore is
// not thread-safe and must not be shared. Other processes must not write the file.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace gshare {

// Job states, named as Slurm's (plus LOST: running when the daemon died).
inline constexpr const char* kJobStates[] = {"PENDING",   "RUNNING", "COMPLETED", "FAILED",
                                             "CANCELLED", "TIMEOUT", "LOST",      "SUSPENDED"};
// True for the states above; IsFinalJobState for those a job never leaves.
bool IsJobState(std::string_view state);
bool IsFinalJobState(std::string_view state);  // COMPLETED FAILED CANCELLED TIMEOUT LOST

// One row of the jobs table. Times are unix seconds.
struct JobRecord {
  int64_t id = 0;                  // assigned by Insert
  std::string name;
  std::vector<std::string> argv;   // stored as a JSON array; invalid UTF-8 is stored as U+FFFD
  std::string cwd;
  uint32_t uid = 0;
  int priority = 0;
  int64_t quantum_ms = 0;
  std::string gpu;                 // as the user gave it; empty: any
  std::string state = "PENDING";   // one of kJobStates
  std::string reason;              // why a pending job waits; may be empty
  double submit_time = 0;
  std::optional<double> start_time;
  std::optional<double> end_time;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::optional<int> pid;
  double lease_seconds = 0;        // time holding a GPU lease
  double wait_seconds = 0;         // time waiting for one
  uint64_t peak_bytes = 0;         // peak GPU memory
  std::string kind = "submit";     // "run" or "submit"
};

// Which rows List returns.
struct ListFilter {
  std::set<std::string> states;  // empty: every state
  int limit = 0;                 // 0: no limit
};

class JobStore {
 public:
  // Opens or creates the database at `path`, creating missing parent directories with mode
  // 0700, in WAL mode with a busy timeout and synchronous=NORMAL, and migrates its schema to
  // the newest version (PRAGMA user_version). Fails, with sqlite's or the OS's message and the
  // path, when the file cannot be created or written (read-only directory, full disk), is not
  // a database, or has a schema newer than this build knows.
  static Result<std::unique_ptr<JobStore>> Open(const std::string& path);
  ~JobStore();
  JobStore(const JobStore&) = delete;
  JobStore& operator=(const JobStore&) = delete;

  // Schema version this build writes (the length of its migration list).
  static int SchemaVersion();

  // Adds `record` as a new row, ignoring record.id; returns the new id. Fails on a state or
  // kind that is not known.
  Result<int64_t> Insert(const JobRecord& record);
  // Sets job `id` RUNNING with `pid` and `start_time`, and clears its reason. Fails when no
  // such job exists.
  Status MarkRunning(int64_t id, int pid, double start_time);
  // Ends job `id` in `state` (one of IsFinalJobState) with its exit status, end time and final
  // usage. Fails on a state that is not final or when no such job exists.
  Status Finish(int64_t id, std::string state, std::optional<int> exit_code,
                std::optional<int> signal, double end_time, double lease_seconds,
                double wait_seconds, uint64_t peak_bytes);
  // Records the usage so far of job `id`. Fails when no such job exists.
  Status UpdateUsage(int64_t id, double lease_seconds, double wait_seconds, uint64_t peak_bytes);
  // The row of job `id`, or nullopt when there is none.
  Result<std::optional<JobRecord>> Get(int64_t id);
  // Rows whose state is in filter.states (all when empty), newest (highest id) first, at most
  // filter.limit of them (all when 0). Fails on an unknown state in the filter.
  Result<std::vector<JobRecord>> List(const ListFilter& filter);
  // For daemon start: every RUNNING job becomes LOST with end_time `now`. Returns how many.
  Result<int> MarkRunningAsLost(double now);

 private:
  struct StatementDeleter {
    void operator()(sqlite3_stmt* s) const;
  };
  using StatementPtr = std::unique_ptr<sqlite3_stmt, StatementDeleter>;

  JobStore(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  Status Migrate();
  Status Exec(const char* sql);
  // The cached prepared statement for `sql`, reset and with bindings cleared.
  Result<sqlite3_stmt*> Prepare(const std::string& sql);
  // Runs a statement that returns no rows; *changes gets the number of rows it changed.
  Status Step(sqlite3_stmt* stmt, const char* what, int* changes);
  Status Error(std::string_view what) const;  // `what` failed, with sqlite's last message

  sqlite3* db_;
  const std::string path_;
  std::map<std::string, StatementPtr> statements_;  // by SQL text
};

}  // namespace gshare
