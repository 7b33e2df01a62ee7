// The daemon's SQLite database of jobs (docs/cli.md, "Persistence"): one row per `run` or
// `submit` job. Written only by the daemon, through a single JobStore owned by one thread: a
// JobStore is not thread-safe and must not be shared. Other processes must not write the file.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/job_state.h"
#include "base/status.h"
#include "store/timeline_event.h"

struct sqlite3;
struct sqlite3_stmt;

namespace gshare {

// One row of the jobs table. Times are unix seconds.
struct JobRecord {
  int64_t id = 0;  // assigned by Insert
  std::string name;
  std::vector<std::string> argv;  // stored as a JSON array; invalid UTF-8 is stored as U+FFFD
  std::string cwd;
  uint32_t uid = 0;
  int priority = 0;
  int64_t quantum_ms = 0;
  std::string gpu;  // as the user gave it (indexes or UUIDs, comma-separated); empty: any
  int gpus = 1;     // GPUs the job uses at once (--gpus; a gang lease when more than one)
  JobState state = JobState::kPending;
  std::string reason;  // why a pending job waits; may be empty
  double submit_time = 0;
  std::optional<double> start_time;
  std::optional<double> end_time;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::optional<int> pid;
  double lease_seconds = 0;     // time holding a GPU lease
  double wait_seconds = 0;      // time waiting for one
  uint64_t peak_bytes = 0;      // peak GPU memory
  std::string kind = "submit";  // "run", "submit" or "slurm" (a Slurm job step's tasks)
  // Queue options (schema 2 on). Durations in milliseconds, 0: none.
  std::string output;              // output file pattern (%j %x %u %%); empty: the terminal (run)
  int64_t time_limit_ms = 0;       // -t/--time; 0: no limit
  int64_t kill_after_ms = 30'000;  // SIGTERM -> SIGKILL grace for the time limit and cancel
  std::string dependency;          // canonical "afterok:1:2,afterany:3" (dependency.h); empty: none
  bool held = false;               // -H / `gshare hold`: not started until released
  std::optional<double> begin_time;  // --begin: not started before (unix seconds)
  std::string end_request;           // "cancel" or "requeue" once asked for a running job; else ""
  // The process that reports the job's end (`gshare run` or the job's supervisor), identified
  // across pid reuse by its start time (/proc/PID/stat field 22, clock ticks since boot).
  std::optional<int> runner_pid;
  std::optional<int64_t> runner_start;
  std::string slot;    // GPU slot the queue placed the job on ("0", "1", a UUID)
  std::string memory;  // schema 4: memory engine (--memory); empty: the config's
  // Schema 6: the job's secret (base/job_token.h), which its processes show the daemon to join
  // the job. Never printed, never in JSON.
  std::string token;
  // Schema 8: a task of a job array (`submit --array`). array_job_id is the array's id, its
  // first task's id (Slurm's SLURM_ARRAY_JOB_ID); 0: the job is no array task, and the other
  // fields are 0. The array's task count, lowest and highest task ids, and its "%N" limit of
  // tasks running at once (0: none) are the same in each of its tasks.
  int64_t array_job_id = 0;
  int64_t array_task_id = 0;
  int64_t array_task_count = 0;
  int64_t array_task_min = 0;
  int64_t array_task_max = 0;
  int64_t array_limit = 0;
  // Schema 9: accounting (`gshare acct`). The job's memory swapped out and back in (its
  // processes' evictions and swap-ins, whole-process checkpoints and restores among them), and
  // how many runs came before this one (sacct's Restarts; requeue keeps each in job_runs).
  uint64_t swaps_out = 0;
  uint64_t swaps_in = 0;
  int restarts = 0;
  // Schema 11: a job that Slurm started (kind "slurm"): its Slurm job id and step ("0",
  // "batch"); 0 and "" for every other job.
  int64_t slurm_job_id = 0;
  std::string slurm_step;
  // Schema 12: --mail-user and --mail-type (base/mail_type.h's canonical list; "": none),
  // passed to the [notify] command.
  std::string mail_user;
  std::string mail_type;

  bool IsArrayTask() const { return array_job_id != 0; }
  bool operator==(const JobRecord&) const = default;
};

// One run of a job as `gshare acct` lists it: the job's row (its latest run), or an earlier run
// of a requeued job, kept in the job_runs table: then `job` is the job's row with that run's
// state, reason, times, exit, usage and GPU slot in place of the latest's, and job.restarts its
// number (0: the first run).
struct JobRun {
  JobRecord job;
  bool requeued = false;  // an earlier run that `gshare requeue` ended (sacct's REQUEUED)
};

// Which runs ForEachRun calls back for: those submitted at or before `until` that had not
// ended before `since` (a run not ended yet always has not), as sacct's --starttime/--endtime
// select the jobs that existed within the window.
struct RunFilter {
  double since = 0;             // unix seconds
  double until = 0;             // unix seconds
  std::set<JobState> states;    // the run's state; empty: every state
  bool requeued = false;        // also earlier runs ended by requeue when `states` is not empty
  std::optional<uint32_t> uid;  // the owner
  // Paging (the system daemon's replies are bounded): only jobs with a greater id, and at most
  // this many job rows (0: no limit); a full page leaves out the earlier runs of jobs after
  // its last row, which come with the next page.
  int64_t after_id = 0;
  int max_rows = 0;
};

// Makes `r` PENDING again (requeue): as new but for its id, options and submission time.
void ResetForQueue(JobRecord& r);

// What a submitted job carries besides its row: kept in a table of its own so that listing
// jobs never reads it. The tasks of a job array share one, stored with the array's job id
// (PayloadIdOf).
struct JobPayload {
  std::vector<std::string> env;       // "K=V" entries: the environment the job starts with
  std::optional<std::string> script;  // the batch script's text (`submit --script`)
  // The client's key of the submission (empty: none); unique among stored jobs, so that a
  // submit retried after a lost reply finds the job it made (FindBySubmitKey).
  std::string submit_key;
};

// The id a job's payload is stored under: its array's job id for an array task, else its own.
inline int64_t PayloadIdOf(const JobRecord& r) { return r.IsArrayTask() ? r.array_job_id : r.id; }
// An array task's task id (for %a in output patterns); nullopt for any other job.
inline std::optional<int64_t> ArrayTaskIdOf(const JobRecord& r) {
  return r.IsArrayTask() ? std::optional<int64_t>(r.array_task_id) : std::nullopt;
}

// Which rows List returns.
struct ListFilter {
  std::set<JobState> states;    // empty: every state
  std::string name;             // empty: any; else the exact job name
  std::optional<uint32_t> uid;  // the owner
  int limit = 0;                // 0: no limit
  // kNewestFirst: highest id first. kQueueOrder: RUNNING and SUSPENDED jobs first (by start),
  // then PENDING ones in the order admission considers them (priority, submission time, id),
  // then the rest newest first.
  enum class Order { kNewestFirst, kQueueOrder } order = Order::kNewestFirst;
};

class JobStore {
 public:
  // Opens or creates the database at `path`, creating missing parent directories with mode
  // 0700, in WAL mode with a busy timeout and synchronous=NORMAL, and migrates its schema to
  // the newest version (PRAGMA user_version). A missing file is a new, empty queue; a file
  // that is empty or not SQLite's is refused, not opened (store/database_file.h). Fails, with
  // sqlite's or the OS's message and the path, when the file cannot be created or written
  // (read-only directory, full disk), is not a database, or has a schema newer than this
  // build knows.
  static Result<std::unique_ptr<JobStore>> Open(const std::string& path);
  // Opens an existing database for reading only (a CLI process reading what the daemon
  // wrote). Fails when the file is missing, unreadable or not at this build's schema version.
  static Result<std::unique_ptr<JobStore>> OpenReadOnly(const std::string& path);
  ~JobStore();
  JobStore(const JobStore&) = delete;
  JobStore& operator=(const JobStore&) = delete;

  // Schema version this build writes (the length of its migration list).
  static int SchemaVersion();

  // Adds `record` as a new row, ignoring record.id; returns the new id. Fails on a kind that
  // is not known.
  Result<int64_t> Insert(const JobRecord& record, const JobPayload* payload = nullptr);
  // Adds `tasks` (at least one) as the rows of one job array, with `payload`, all or none in
  // one transaction: the first task's new id becomes every task's array_job_id, and the
  // payload is stored under it. On success each task's id and array_job_id are set. Fails as
  // Insert does.
  Status InsertArray(std::vector<JobRecord>* tasks, const JobPayload& payload);
  // Writes every column of `record` (found by record.id) but its payload. Fails on an unknown
  // kind or when no such job exists.
  Status Save(const JobRecord& record);
  // The job a submission with `key` made, or nullopt when none is stored.
  Result<std::optional<int64_t>> FindBySubmitKey(const std::string& key);
  // The payload stored with job `id` (empty when it has none); an array task's is found under
  // PayloadIdOf.
  Result<JobPayload> GetPayload(int64_t id);
  // Sets the reason of each (id, reason) in one transaction.
  Status SetReasons(const std::vector<std::pair<int64_t, std::string>>& reasons);
  // Deletes, with their payloads (an array's with its last task) and in one transaction, the jobs
  // in a final state that ended before `ended_before` (unix seconds) or that are not among the
  // `keep_newest` last to end, except those in `keep`; only `owner`'s jobs when given (keep_newest
  // then counts theirs). Returns the deleted rows.
  Result<std::vector<JobRecord>> DeleteEnded(double ended_before, size_t keep_newest,
                                             const std::set<int64_t>& keep,
                                             std::optional<uint32_t> owner = std::nullopt);
  // Calls `row` for each job matching `filter` (its order and limit ignored) in queue order,
  // with only what `gshare queue` shows filled (id, name, state, priority, reason, uid, gpu,
  // slot, kind, submit/start/end times, exit code, signal), streaming from SQLite: nothing
  // is kept, so 100,000 rows cost no memory. `row` must not call back into this store.
  Status ForEachInQueueOrder(const ListFilter& filter,
                             const std::function<void(const JobRecord&)>& row);
  // The row of job `id`, or nullopt when there is none.
  Result<std::optional<JobRecord>> Get(int64_t id);
  // Rows matching `filter`, in its order, at most filter.limit of them (all when 0). A row
  // that cannot be read (a column edited by hand, a
  // damaged value) fails the whole list, unless `bad_rows` is given: then it is skipped and
  // its (id, error) appended there.
  Result<std::vector<JobRecord>> List(
      const ListFilter& filter, std::vector<std::pair<int64_t, std::string>>* bad_rows = nullptr);
  // Sets state FAILED, the end time and `reason` of job `id` by column, without reading the
  // row (for a row List reported as unreadable).
  Status FailUnreadable(int64_t id, double end_time, const std::string& reason);

  // Run history (job_store_runs.cc). Keeps `ended` (a run of job again->id, as its row was
  // when the run ended; ended.job.restarts its number), requeued at `requeue_time` (unix
  // seconds), in job_runs and saves `again` (the job made PENDING by ResetForQueue) as the
  // job's row with restarts one more, in one transaction. Fails as Save does, or when that run
  // is kept already; then nothing is written and `again` is unchanged.
  Status SaveRequeued(const JobRun& ended, double requeue_time, JobRecord* again);
  // Calls `run` for each run matching `filter`, by job id, then run number, streaming: a
  // job's earlier runs (read first, all at once: requeues are few) before its row. Only what
  // `gshare acct` shows is filled: the summary columns of ForEachInQueueOrder, priority,
  // gpus, the usage columns (lease, wait, peak bytes, swaps) and restarts. A later run's
  // submit_time is when the run before it was requeued. `run` must not call back into this
  // store. With filter.max_rows, *next_after (when given) gets the after_id of the next page
  // when this one was full, else 0.
  Status ForEachRun(const RunFilter& filter, const std::function<void(const JobRun&)>& run,
                    int64_t* next_after = nullptr);

  // The GPU timeline (job_store_timeline.cc). Appends `events` (their ids ignored) in one
  // transaction: the daemon batches them, so a burst of grants costs one commit.
  Status AppendTimeline(const std::vector<TimelineEvent>& events);
  // Calls `event` for each event matching `filter`, in id order, with job_name filled from
  // the job's row when it still exists, streaming. `event` must not call back into this
  // store. With filter.max_rows, *next_after (when given) gets the after_id of the next page
  // when this one was full, else 0.
  Status ForEachTimelineEvent(const TimelineFilter& filter,
                              const std::function<void(const TimelineEvent&)>& event,
                              int64_t* next_after = nullptr);
  // Deletes the events recorded before `before_us` (unix microseconds) and all but the
  // `keep_newest` last recorded, in one statement. Returns how many went.
  Result<int64_t> DeleteTimeline(int64_t before_us, int64_t keep_newest);

 private:
  struct StatementDeleter {
    void operator()(sqlite3_stmt* s) const;
  };
  using StatementPtr = std::unique_ptr<sqlite3_stmt, StatementDeleter>;

  JobStore(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  // Open's SQLite part: opens or creates the file at `path` in WAL mode and migrates it.
  static Result<std::unique_ptr<JobStore>> OpenFile(const std::string& path);
  Result<int> ReadSchemaVersion();
  Status Migrate();
  Status Exec(const char* sql);
  // The INSERT of one row (no transaction of its own); returns its id.
  Result<int64_t> InsertRow(const JobRecord& record);
  // The INSERT of `payload` under job id `id`.
  Status InsertPayload(int64_t id, const JobPayload& payload);
  // The cached prepared statement for `sql`, reset and with bindings cleared.
  Result<sqlite3_stmt*> Prepare(const std::string& sql);
  // Runs a statement that returns no rows; *changes gets the number of rows it changed.
  Status Step(sqlite3_stmt* stmt, const char* what, int* changes);
  Status Error(std::string_view what) const;  // `what` failed, with sqlite's last message
  // Runs `select` (SELECT ... FROM jobs) restricted to `states` (all when empty; tested on
  // `state_column`, "state" or "+state") and filter.name / filter.uid, then `order_by`, at most
  // `limit` rows (all when <= 0); calls `row` on each and stops at its first error.
  using RowFn = std::function<Status(sqlite3_stmt*)>;
  Status Scan(const std::string& select, const char* state_column,
              const std::vector<std::string>& states, const ListFilter& filter,
              const char* order_by, int64_t limit, const RowFn& row);
  // Scan in queue order (ListFilter::Order::kQueueOrder), honouring filter.limit.
  Status ScanQueueOrder(const std::string& select, const ListFilter& filter, const RowFn& row);

  sqlite3* db_;
  const std::string path_;
  std::map<std::string, StatementPtr> statements_;  // by SQL text
};

}  // namespace gshare
