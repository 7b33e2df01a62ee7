// JobStore's run history (`gshare acct`): the earlier runs of requeued jobs in job_runs, and
// every run of a time window, streamed in job order.
#include <sqlite3.h>

#include <map>
#include <vector>

#include "store/job_row.h"
#include "store/job_store.h"

namespace gshare {
namespace {

using namespace job_row;  // NOLINT: the row codec is this file's vocabulary

// What acct shows of a job, in the column order ReadRun reads (SelectSummaries' first); job_runs'
// own columns where a run has its own, and the job's for the rest. "+state" keeps SQLite off the
// state index: the rows come in id order without a sort.
constexpr const char* kSelectJobRuns =
    "SELECT id, name, state, priority, reason, uid, gpu, slot, kind, submit_time, start_time,"
    " end_time, exit_code, signal, array_job_id, array_task_id, lease_seconds, wait_seconds,"
    " peak_bytes, swaps_out, swaps_in, restarts, gpus, 0 FROM jobs";
constexpr const char* kSelectEarlierRuns =
    "SELECT r.job_id, j.name, r.state, j.priority, r.reason, j.uid, j.gpu, r.slot, j.kind,"
    " r.submit_time, r.start_time, r.end_time, r.exit_code, r.signal, j.array_job_id,"
    " j.array_task_id, r.lease_seconds, r.wait_seconds, r.peak_bytes, r.swaps_out, r.swaps_in,"
    " r.run, j.gpus, r.requeued, r.requeue_time FROM job_runs r JOIN jobs j ON j.id = r.job_id";

JobRun ReadRun(sqlite3_stmt* stmt) {
  JobRun run;
  run.job = ReadSummaryRow(stmt);  // columns 0..15: SelectSummaries' order
  JobRecord& r = run.job;
  r.lease_seconds = sqlite3_column_double(stmt, 16);
  r.wait_seconds = sqlite3_column_double(stmt, 17);
  r.peak_bytes = static_cast<uint64_t>(sqlite3_column_int64(stmt, 18));
  r.swaps_out = static_cast<uint64_t>(sqlite3_column_int64(stmt, 19));
  r.swaps_in = static_cast<uint64_t>(sqlite3_column_int64(stmt, 20));
  r.restarts = sqlite3_column_int(stmt, 21);
  r.gpus = sqlite3_column_int(stmt, 22);
  run.requeued = sqlite3_column_int(stmt, 23) != 0;
  return run;
}

// Whether a run in `state` (requeued or not) is one `filter` asks for.
bool Wanted(const RunFilter& filter, JobState state, bool requeued) {
  if (filter.states.empty() && !filter.requeued) return true;
  return requeued ? filter.requeued : filter.states.count(state) != 0;
}

}  // namespace

Status JobStore::SaveRequeued(const JobRun& ended, double requeue_time, JobRecord* again) {
  const JobRecord& e = ended.job;
  Status st = Exec("BEGIN IMMEDIATE");
  if (!st.ok()) return st;
  Result<sqlite3_stmt*> s = Prepare(
      "INSERT INTO job_runs (job_id, run, state, requeued, reason, submit_time, start_time,"
      " end_time, exit_code, signal, lease_seconds, wait_seconds, peak_bytes, swaps_out,"
      " swaps_in, slot, requeue_time)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)");
  if (s.ok()) {
    sqlite3_stmt* stmt = s.value();
    sqlite3_bind_int64(stmt, 1, again->id);
    sqlite3_bind_int64(stmt, 2, e.restarts);
    BindText(stmt, 3, JobStateName(e.state));
    sqlite3_bind_int(stmt, 4, ended.requeued ? 1 : 0);
    BindText(stmt, 5, e.reason);
    sqlite3_bind_double(stmt, 6, e.submit_time);
    BindOptional(stmt, 7, e.start_time);
    BindOptional(stmt, 8, e.end_time);
    BindOptional(stmt, 9, e.exit_code);
    BindOptional(stmt, 10, e.signal);
    sqlite3_bind_double(stmt, 11, e.lease_seconds);
    sqlite3_bind_double(stmt, 12, e.wait_seconds);
    sqlite3_bind_int64(stmt, 13, ClampBytes(e.peak_bytes));
    sqlite3_bind_int64(stmt, 14, ClampBytes(e.swaps_out));
    sqlite3_bind_int64(stmt, 15, ClampBytes(e.swaps_in));
    BindText(stmt, 16, e.slot);
    sqlite3_bind_double(stmt, 17, requeue_time);
    st = Step(stmt, "keep a job's run", nullptr);
  } else {
    st = s.status();
  }
  JobRecord next = *again;
  next.restarts = e.restarts + 1;
  if (st.ok()) st = Save(next);
  if (st.ok()) st = Exec("COMMIT");
  if (!st.ok()) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return st;
  }
  *again = std::move(next);
  return Status::Ok();
}

Status JobStore::ForEachRun(const RunFilter& filter, const std::function<void(const JobRun&)>& run,
                            int64_t* next_after) {
  if (next_after != nullptr) *next_after = 0;
  // The earlier runs first, by job: few (one per requeue), so they are held while the jobs
  // stream. A later run's submission is when the run before it was requeued.
  std::map<int64_t, std::vector<JobRun>> earlier;
  std::map<std::pair<int64_t, int>, double> requeued_at;  // (job, run) -> requeue time
  {
    std::string sql = kSelectEarlierRuns;
    sql += " WHERE r.job_id > ?1";
    if (filter.uid) sql += " AND j.uid = ?2";
    Result<sqlite3_stmt*> s = Prepare(sql + " ORDER BY r.job_id, r.run");
    if (!s.ok()) return s.status();
    ResetOnExit reset{s.value()};
    sqlite3_bind_int64(s.value(), 1, filter.after_id);
    if (filter.uid) sqlite3_bind_int64(s.value(), 2, *filter.uid);
    for (;;) {
      int rc = sqlite3_step(s.value());
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return Error("list job runs");
      JobRun r = ReadRun(s.value());
      requeued_at[{r.job.id, r.job.restarts}] = sqlite3_column_double(s.value(), 24);
      earlier[r.job.id].push_back(std::move(r));
    }
  }
  auto resubmitted = [&requeued_at](JobRecord* r) {
    if (r->restarts == 0) return;
    auto at = requeued_at.find({r->id, r->restarts - 1});
    if (at != requeued_at.end()) r->submit_time = at->second;
  };
  auto in_window = [&filter](const JobRecord& r) {
    return r.submit_time <= filter.until && (!r.end_time || *r.end_time >= filter.since);
  };
  auto emit_earlier = [&](std::map<int64_t, std::vector<JobRun>>::iterator it) {
    for (JobRun& r : it->second) {
      resubmitted(&r.job);
      if (in_window(r.job) && Wanted(filter, r.job.state, r.requeued)) run(r);
    }
  };
  auto next = earlier.begin();
  // The window on the latest runs is tested in SQL on the row's own submission time, which
  // is no later than a requeued run's, so no row in the window is missed; the exact test
  // follows once the run's submission is known.
  const bool rows_wanted = !filter.states.empty() || !filter.requeued;
  if (rows_wanted) {
    std::string sql = kSelectJobRuns;
    sql += " WHERE id > ?1 AND submit_time <= ?2 AND (end_time IS NULL OR end_time >= ?3)";
    int index = 4;
    for (size_t i = 0; i < filter.states.size(); ++i) {
      sql += (i == 0 ? " AND +state IN (?" : ", ?") + std::to_string(index++);
    }
    if (!filter.states.empty()) sql += ")";
    const int uid_index = filter.uid ? index++ : 0;
    if (uid_index != 0) sql += " AND uid = ?" + std::to_string(uid_index);
    Result<sqlite3_stmt*> s = Prepare(sql + " ORDER BY id LIMIT ?" + std::to_string(index));
    if (!s.ok()) return s.status();
    ResetOnExit reset{s.value()};
    sqlite3_bind_int64(s.value(), 1, filter.after_id);
    sqlite3_bind_double(s.value(), 2, filter.until);
    sqlite3_bind_double(s.value(), 3, filter.since);
    int i = 4;
    for (JobState state : filter.states) BindText(s.value(), i++, JobStateName(state));
    if (uid_index != 0) sqlite3_bind_int64(s.value(), uid_index, *filter.uid);
    sqlite3_bind_int64(s.value(), index, filter.max_rows > 0 ? filter.max_rows : -1);
    int rows = 0;
    int64_t last_id = 0;
    for (;;) {
      int rc = sqlite3_step(s.value());
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return Error("list job runs");
      JobRun r = ReadRun(s.value());
      ++rows;
      last_id = r.job.id;
      for (; next != earlier.end() && next->first <= r.job.id; ++next) emit_earlier(next);
      resubmitted(&r.job);
      if (in_window(r.job)) run(r);
    }
    // A full page: the jobs after its last row, and their earlier runs, are the next page's.
    if (filter.max_rows > 0 && rows == filter.max_rows) {
      if (next_after != nullptr) *next_after = last_id;
      return Status::Ok();
    }
  }
  for (; next != earlier.end(); ++next) emit_earlier(next);
  return Status::Ok();
}

}  // namespace gshare
