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
#include "model/job_filters.h"
#include "model/job_record.h"
#include "store/timeline_event.h"

struct sqlite3;
struct sqlite3_stmt;

namespace gshare {

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

  // Adds `record` as a new row, ignoring record.id; returns the new id. Fails on a database
  // error.
  Result<int64_t> Insert(const JobRecord& record, const JobPayload* payload = nullptr);
  // Adds `tasks` (at least one) as the rows of one job array, with `payload`, all or none in
  // one transaction: the first task's new id becomes every task's array_job_id, and the
  // payload is stored under it. On success each task's id and array_job_id are set. Fails as
  // Insert does.
  Status InsertArray(std::vector<JobRecord>* tasks, const JobPayload& payload);
  // Writes every column of `record` (found by record.id) but its payload. Fails when no such
  // job exists.
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
  // Scan in queue order (ListFilter::Order::kQueueOrder), honouring filter.limit, of one
  // snapshot of the database (a read transaction unless one is open).
  Status ScanQueueOrder(const std::string& select, const ListFilter& filter, const RowFn& row);

  sqlite3* db_;
  const std::string path_;
  std::map<std::string, StatementPtr> statements_;  // by SQL text
};

}  // namespace gshare
