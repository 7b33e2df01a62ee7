// How a JobRecord maps to the jobs table's columns and back, and the small SQLite helpers
// the JobStore's files share. Internal to job_store*.cc; same threading as JobStore.
#pragma once

#include <sqlite3.h>

#include <optional>
#include <string>
#include <vector>

#include "store/job_store.h"

namespace gshare::job_row {

// Number of columns BindRecord binds (every column but id).
int NumWritable();
// Column i (0-based) of BindRecord's order.
const char* WritableColumn(int i);
// "name, argv, ...": every column but id, in BindRecord's order.
std::string WritableColumnList();
// "SELECT id, name, argv, ... FROM jobs": what ReadRow reads.
std::string SelectJobs();

// The row under `stmt`, a statement of SelectJobs(). Fails on a hand-edited argv that is not
// a JSON array of strings.
Result<JobRecord> ReadRow(sqlite3_stmt* stmt);

// "SELECT <what `gshare queue` shows> FROM jobs" and its reader (ForEachInQueueOrder).
std::string SelectSummaries();
JobRecord ReadSummaryRow(sqlite3_stmt* stmt);
// Binds every column but id, as ?1..?NumWritable().
void BindRecord(sqlite3_stmt* stmt, const JobRecord& record);

void BindText(sqlite3_stmt* stmt, int index, const std::string& v);
void BindOptional(sqlite3_stmt* stmt, int index, const std::optional<int>& v);
void BindOptional(sqlite3_stmt* stmt, int index, const std::optional<double>& v);
void BindOptional(sqlite3_stmt* stmt, int index, const std::optional<int64_t>& v);
// Bytes as SQLite's signed 64-bit integer, saturating.
int64_t ClampBytes(uint64_t bytes);
std::string ColumnText(sqlite3_stmt* stmt, int col);
// JSON text of a list of strings; invalid UTF-8 becomes U+FFFD instead of throwing.
std::string StringsToJson(const std::vector<std::string>& strings);

// Resets a cached statement when leaving scope: a SELECT left un-reset would keep its read
// transaction open and stop WAL checkpoints.
struct ResetOnExit {
  sqlite3_stmt* stmt;
  ~ResetOnExit() { sqlite3_reset(stmt); }
};

}  // namespace gshare::job_row
