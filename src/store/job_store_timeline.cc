// JobStore's GPU timeline: the events the daemon records in batches, read back in the order
// they were recorded, and bounded by retention.
#include <sqlite3.h>

#include <string>

#include "store/job_row.h"
#include "store/job_store.h"

namespace gshare {
namespace {

using namespace job_row;  // NOLINT: the row codec is this file's vocabulary

}  // namespace

Status JobStore::AppendTimeline(const std::vector<TimelineEvent>& events) {
  if (events.empty()) return Status::Ok();
  Status st = Exec("BEGIN IMMEDIATE");
  if (!st.ok()) return st;
  Result<sqlite3_stmt*> s = Prepare(
      "INSERT INTO timeline (time_us, kind, gpu, job_id, uid, pid, bytes, ms, detail)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  st = s.status();
  for (size_t i = 0; st.ok() && i < events.size(); ++i) {
    const TimelineEvent& e = events[i];
    sqlite3_stmt* stmt = s.value();
    sqlite3_reset(stmt);
    sqlite3_bind_int64(stmt, 1, e.time_us);
    sqlite3_bind_text(stmt, 2, TimelineKindName(e.kind), -1, SQLITE_STATIC);
    BindText(stmt, 3, e.gpu);
    sqlite3_bind_int64(stmt, 4, e.job);
    sqlite3_bind_int64(stmt, 5, e.uid);
    sqlite3_bind_int(stmt, 6, e.pid);
    sqlite3_bind_int64(stmt, 7, ClampBytes(e.bytes));
    sqlite3_bind_double(stmt, 8, e.ms);
    BindText(stmt, 9, e.detail);
    st = Step(stmt, "record timeline events", nullptr);
  }
  if (st.ok()) st = Exec("COMMIT");
  if (!st.ok()) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  return st;
}

Status JobStore::ForEachTimelineEvent(const TimelineFilter& filter,
                                      const std::function<void(const TimelineEvent&)>& event,
                                      int64_t* next_after) {
  if (next_after != nullptr) *next_after = 0;
  std::string sql =
      "SELECT t.id, t.time_us, t.kind, t.gpu, t.job_id, t.uid, t.pid, t.bytes, t.ms, t.detail,"
      " j.name FROM timeline t LEFT JOIN jobs j ON j.id = t.job_id"
      " WHERE t.id > ?1 AND t.time_us >= ?2 AND t.time_us <= ?3";
  // The job list is tested here rather than in SQL, so that the statement's text (and the
  // cache of prepared statements) does not vary with it.
  if (filter.uid) sql += " AND (t.uid = ?5 OR t.job_id = 0)";
  sql += " ORDER BY t.id LIMIT ?4";
  Result<sqlite3_stmt*> s = Prepare(sql);
  if (!s.ok()) return s.status();
  sqlite3_stmt* stmt = s.value();
  ResetOnExit reset{stmt};
  sqlite3_bind_int64(stmt, 1, filter.after_id);
  sqlite3_bind_int64(stmt, 2, filter.since_us);
  sqlite3_bind_int64(stmt, 3, filter.until_us);
  sqlite3_bind_int64(stmt, 4, filter.max_rows > 0 ? filter.max_rows : -1);
  if (filter.uid) sqlite3_bind_int64(stmt, 5, *filter.uid);
  int rows = 0;
  int64_t last_id = 0;
  for (;;) {
    int rc = sqlite3_step(stmt);
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) return Error("read the timeline");
    ++rows;
    last_id = sqlite3_column_int64(stmt, 0);
    TimelineEvent e;
    e.id = last_id;
    e.time_us = sqlite3_column_int64(stmt, 1);
    std::optional<TimelineKind> kind = TimelineKindFromName(ColumnText(stmt, 2));
    if (!kind) continue;  // a kind this build does not know (a newer daemon's): skipped
    e.kind = *kind;
    e.gpu = ColumnText(stmt, 3);
    e.job = sqlite3_column_int64(stmt, 4);
    e.uid = static_cast<uint32_t>(sqlite3_column_int64(stmt, 5));
    e.pid = sqlite3_column_int(stmt, 6);
    e.bytes = static_cast<uint64_t>(sqlite3_column_int64(stmt, 7));
    e.ms = sqlite3_column_double(stmt, 8);
    e.detail = ColumnText(stmt, 9);
    e.job_name = ColumnText(stmt, 10);
    if (!filter.jobs.empty() && filter.jobs.count(e.job) == 0) continue;
    event(e);
  }
  if (filter.max_rows > 0 && rows == filter.max_rows && next_after != nullptr) {
    *next_after = last_id;
  }
  return Status::Ok();
}

Result<int64_t> JobStore::DeleteTimeline(int64_t before_us, int64_t keep_newest) {
  // The newest `keep_newest` are the highest ids: everything at or below the id that many
  // rows from the top goes (none when there are fewer rows).
  Result<sqlite3_stmt*> s = Prepare(
      "DELETE FROM timeline WHERE time_us < ?1 OR id <= "
      "(SELECT id FROM timeline ORDER BY id DESC LIMIT 1 OFFSET ?2)");
  if (!s.ok()) return s.status();
  sqlite3_bind_int64(s.value(), 1, before_us);
  sqlite3_bind_int64(s.value(), 2, keep_newest);
  int changes = 0;
  Status st = Step(s.value(), "delete old timeline events", &changes);
  if (!st.ok()) return st;
  return static_cast<int64_t>(changes);
}

}  // namespace gshare
