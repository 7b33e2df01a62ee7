// JobStore's reads of jobs: one by id, and lists by filter, newest first or in queue order,
// each through one cached statement per filter shape.
#include <sqlite3.h>

#include <set>
#include <string>
#include <vector>

#include "store/job_row.h"
#include "store/job_store.h"

namespace gshare {
namespace {

using namespace job_row;  // NOLINT: the row codec is this file's vocabulary

// The jobs table's text of each state.
std::vector<std::string> StateNames(const std::set<JobState>& states) {
  std::vector<std::string> names;
  for (JobState s : states) names.push_back(JobStateName(s));
  return names;
}

}  // namespace

Result<std::optional<JobRecord>> JobStore::Get(int64_t id) {
  Result<sqlite3_stmt*> s = Prepare(SelectJobs() + " WHERE id = ?1");
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

Status JobStore::Scan(const std::string& select, const char* state_column,
                      const std::vector<std::string>& states, const ListFilter& filter,
                      const char* order_by, int64_t limit, const RowFn& row) {
  // One cached statement per filter shape; values are bound, never spliced into the SQL.
  std::string where;
  int index = 1;
  for (size_t i = 0; i < states.size(); ++i) {
    where += (i == 0 ? std::string(state_column) + " IN (?" : std::string(", ?")) +
             std::to_string(index++);
  }
  if (!states.empty()) where += ")";
  const int name_index = filter.name.empty() ? 0 : index++;
  if (name_index != 0)
    where += (where.empty() ? "" : " AND ") + std::string("name = ?") + std::to_string(name_index);
  const int uid_index = filter.uid ? index++ : 0;
  if (uid_index != 0)
    where += (where.empty() ? "" : " AND ") + std::string("uid = ?") + std::to_string(uid_index);
  const int array_index = filter.array_job_id ? index++ : 0;
  if (array_index != 0) {
    where += (where.empty() ? "" : " AND ") + std::string("array_job_id = ?") +
             std::to_string(array_index);
  }
  std::string sql = select;
  if (!where.empty()) sql += " WHERE " + where;
  sql += order_by;
  sql += " LIMIT ?" + std::to_string(index);
  Result<sqlite3_stmt*> s = Prepare(sql);
  if (!s.ok()) return s.status();
  ResetOnExit reset{s.value()};
  for (size_t i = 0; i < states.size(); ++i)
    BindText(s.value(), static_cast<int>(i + 1), states[i]);
  if (name_index != 0) BindText(s.value(), name_index, filter.name);
  if (uid_index != 0) sqlite3_bind_int64(s.value(), uid_index, *filter.uid);
  if (array_index != 0) sqlite3_bind_int64(s.value(), array_index, *filter.array_job_id);
  sqlite3_bind_int64(s.value(), index, limit > 0 ? limit : -1);  // -1: no limit
  for (;;) {
    int rc = sqlite3_step(s.value());
    if (rc == SQLITE_DONE) return Status::Ok();
    if (rc != SQLITE_ROW) return Error("list jobs");
    Status st = row(s.value());
    if (!st.ok()) return st;
  }
}

Status JobStore::ScanQueueOrder(const std::string& select, const ListFilter& filter,
                                const RowFn& row) {
  // Three passes, each in an order SQLite reads without a sort: running by start, pending by
  // (priority, submission) from the jobs_by_queue_order index, the rest newest first ("+state"
  // keeps SQLite off the state index, so it scans in id order).
  using S = JobState;
  struct Group {
    std::vector<JobState> states;
    const char* column;
    const char* order_by;
  };
  const Group groups[] = {{{S::kRunning, S::kSuspended}, "state", " ORDER BY start_time, id"},
                          {{S::kPending}, "state", " ORDER BY priority DESC, submit_time, id"},
                          {{S::kCancelled, S::kCompleted, S::kFailed, S::kLost, S::kTimeout},
                           "+state",
                           " ORDER BY id DESC"}};
  // The passes read one snapshot of the database: a read transaction (WAL mode keeps it while
  // another process commits; https://www.sqlite.org/isolation.html). Without it a job that moved
  // between two passes, while the daemon commits, is listed twice or not at all. Opened here
  // unless the caller is inside a transaction already.
  const bool own_snapshot = sqlite3_get_autocommit(db_) != 0;
  if (own_snapshot) {
    Status st = Exec("BEGIN");
    if (!st.ok()) return st;
  }
  auto passes = [&]() -> Status {
    int64_t left = filter.limit > 0 ? filter.limit : -1;
    for (const Group& group : groups) {
      std::vector<std::string> wanted;
      for (JobState state : group.states) {
        if (filter.states.empty() || filter.states.count(state) != 0) {
          wanted.push_back(JobStateName(state));
        }
      }
      if (wanted.empty()) continue;
      Status st =
          Scan(select, group.column, wanted, filter, group.order_by, left, [&](sqlite3_stmt* stmt) {
            if (left > 0) --left;
            return row(stmt);
          });
      if (!st.ok()) return st;
      if (left == 0) break;
    }
    return Status::Ok();
  };
  Status st = passes();
  if (own_snapshot && sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  return st;
}

Status JobStore::ForEachInQueueOrder(const ListFilter& filter,
                                     const std::function<void(const JobRecord&)>& row) {
  return ScanQueueOrder(SelectSummaries(), filter, [&](sqlite3_stmt* stmt) {
    row(ReadSummaryRow(stmt));
    return Status::Ok();
  });
}

Result<std::vector<JobRecord>> JobStore::List(
    const ListFilter& filter, std::vector<std::pair<int64_t, std::string>>* bad_rows) {
  std::vector<JobRecord> rows;
  RowFn collect = [&rows, bad_rows](sqlite3_stmt* stmt) {
    Result<JobRecord> row = ReadRow(stmt);
    if (!row.ok() && bad_rows != nullptr) {
      bad_rows->emplace_back(sqlite3_column_int64(stmt, 0), row.status().message());
      return Status::Ok();
    }
    if (!row.ok()) return row.status();
    rows.push_back(std::move(row.value()));
    return Status::Ok();
  };
  Status st = filter.order == ListFilter::Order::kQueueOrder
                  ? ScanQueueOrder(SelectJobs(), filter, collect)
                  : Scan(SelectJobs(), "state", StateNames(filter.states), filter,
                         " ORDER BY id DESC", filter.limit, collect);
  if (!st.ok()) return st;
  return rows;
}

}  // namespace gshare
