// JobRecord <-> the jobs table's columns.
#include "store/job_row.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <type_traits>

namespace gshare::job_row {
namespace {

// Every column but id, in the order BindRecord binds them (?1..?kNumWritable) and ReadRow
// reads them (after id).
constexpr const char* kWritableColumns[] = {"name",
                                            "argv",
                                            "cwd",
                                            "uid",
                                            "priority",
                                            "quantum_ms",
                                            "gpu",
                                            "state",
                                            "reason",
                                            "submit_time",
                                            "start_time",
                                            "end_time",
                                            "exit_code",
                                            "signal",
                                            "pid",
                                            "lease_seconds",
                                            "wait_seconds",
                                            "peak_bytes",
                                            "kind",
                                            "output",
                                            "time_limit_ms",
                                            "kill_after_ms",
                                            "dependency",
                                            "held",
                                            "begin_time",
                                            "end_request",
                                            "runner_pid",
                                            "runner_start",
                                            "slot",
                                            "memory",
                                            "token",
                                            "gpus",
                                            "array_job_id",
                                            "array_task_id",
                                            "array_task_count",
                                            "array_task_min",
                                            "array_task_max",
                                            "array_limit",
                                            "swaps_out",
                                            "swaps_in",
                                            "restarts",
                                            "slurm_job_id",
                                            "slurm_step",
                                            "mail_user",
                                            "mail_type"};
constexpr int kNumWritable = sizeof kWritableColumns / sizeof kWritableColumns[0];

// "name, argv, ...".
}  // namespace

int NumWritable() { return kNumWritable; }

const char* WritableColumn(int i) { return kWritableColumns[i]; }

std::string WritableColumnList() {
  std::string out;
  for (int i = 0; i < kNumWritable; ++i)
    out += std::string(i > 0 ? ", " : "") + kWritableColumns[i];
  return out;
}

// "SELECT id, name, argv, ... FROM jobs": what ReadRow reads.
std::string SelectJobs() { return "SELECT id, " + WritableColumnList() + " FROM jobs"; }

void BindOptional(sqlite3_stmt* stmt, int index, const std::optional<int>& v) {
  if (v)
    sqlite3_bind_int64(stmt, index, *v);
  else
    sqlite3_bind_null(stmt, index);
}

void BindOptional(sqlite3_stmt* stmt, int index, const std::optional<double>& v) {
  if (v)
    sqlite3_bind_double(stmt, index, *v);
  else
    sqlite3_bind_null(stmt, index);
}

void BindOptional(sqlite3_stmt* stmt, int index, const std::optional<int64_t>& v) {
  if (v)
    sqlite3_bind_int64(stmt, index, *v);
  else
    sqlite3_bind_null(stmt, index);
}

void BindText(sqlite3_stmt* stmt, int index, const std::string& v) {
  sqlite3_bind_text(stmt, index, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}

// JSON text of a list of strings; invalid UTF-8 becomes U+FFFD instead of throwing.
std::string StringsToJson(const std::vector<std::string>& strings) {
  return nlohmann::json(strings).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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

namespace {

template <typename T>
std::optional<T> ColumnOptional(sqlite3_stmt* stmt, int col) {
  if (sqlite3_column_type(stmt, col) == SQLITE_NULL) return std::nullopt;
  if constexpr (std::is_floating_point_v<T>)
    return sqlite3_column_double(stmt, col);
  else
    return static_cast<T>(sqlite3_column_int64(stmt, col));
}

}  // namespace

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
  const std::string state = ColumnText(stmt, 8);
  std::optional<JobState> known = JobStateFromName(state);
  if (!known) return Status::Error("unknown job state \"" + state + "\"");
  r.state = *known;
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
  const std::string kind = ColumnText(stmt, 19);
  std::optional<JobKind> known_kind = ParseJobKind(kind);
  if (!known_kind) return Status::Error("unknown job kind \"" + kind + "\"");
  r.kind = *known_kind;
  r.output = ColumnText(stmt, 20);
  r.time_limit_ms = sqlite3_column_int64(stmt, 21);
  r.kill_after_ms = sqlite3_column_int64(stmt, 22);
  r.dependency = ColumnText(stmt, 23);
  r.held = sqlite3_column_int(stmt, 24) != 0;
  r.begin_time = ColumnOptional<double>(stmt, 25);
  r.end_request = ColumnText(stmt, 26);
  r.runner_pid = ColumnOptional<int>(stmt, 27);
  r.runner_start = ColumnOptional<int64_t>(stmt, 28);
  r.slot = ColumnText(stmt, 29);
  r.memory = ColumnText(stmt, 30);
  r.token = ColumnText(stmt, 31);
  r.gpus = sqlite3_column_int(stmt, 32);
  r.array_job_id = sqlite3_column_int64(stmt, 33);
  r.array_task_id = sqlite3_column_int64(stmt, 34);
  r.array_task_count = sqlite3_column_int64(stmt, 35);
  r.array_task_min = sqlite3_column_int64(stmt, 36);
  r.array_task_max = sqlite3_column_int64(stmt, 37);
  r.array_limit = sqlite3_column_int64(stmt, 38);
  r.swaps_out = static_cast<uint64_t>(sqlite3_column_int64(stmt, 39));
  r.swaps_in = static_cast<uint64_t>(sqlite3_column_int64(stmt, 40));
  r.restarts = sqlite3_column_int(stmt, 41);
  r.slurm_job_id = sqlite3_column_int64(stmt, 42);
  r.slurm_step = ColumnText(stmt, 43);
  r.mail_user = ColumnText(stmt, 44);
  r.mail_type = ColumnText(stmt, 45);
  return r;
}

std::string SelectSummaries() {
  return "SELECT id, name, state, priority, reason, uid, gpu, slot, kind, submit_time, start_time,"
         " end_time, exit_code, signal, array_job_id, array_task_id FROM jobs";
}

JobRecord ReadSummaryRow(sqlite3_stmt* stmt) {
  JobRecord r;
  r.id = sqlite3_column_int64(stmt, 0);
  r.name = ColumnText(stmt, 1);
  // Summaries are selected by state (state IN the names of JobStateName), so the text is known.
  r.state = JobStateFromName(ColumnText(stmt, 2)).value_or(JobState::kFailed);
  r.priority = sqlite3_column_int(stmt, 3);
  r.reason = ColumnText(stmt, 4);
  r.uid = static_cast<uint32_t>(sqlite3_column_int64(stmt, 5));
  r.gpu = ColumnText(stmt, 6);
  r.slot = ColumnText(stmt, 7);
  // A kind a newer gshare wrote reads as a submitted job's: summaries are for listing.
  r.kind = ParseJobKind(ColumnText(stmt, 8)).value_or(JobKind::kSubmit);
  r.submit_time = sqlite3_column_double(stmt, 9);
  r.start_time = ColumnOptional<double>(stmt, 10);
  r.end_time = ColumnOptional<double>(stmt, 11);
  r.exit_code = ColumnOptional<int>(stmt, 12);
  r.signal = ColumnOptional<int>(stmt, 13);
  r.array_job_id = sqlite3_column_int64(stmt, 14);
  r.array_task_id = sqlite3_column_int64(stmt, 15);
  return r;
}

void BindRecord(sqlite3_stmt* s, const JobRecord& r) {
  BindText(s, 1, r.name);
  BindText(s, 2, StringsToJson(r.argv));
  BindText(s, 3, r.cwd);
  sqlite3_bind_int64(s, 4, r.uid);
  sqlite3_bind_int64(s, 5, r.priority);
  sqlite3_bind_int64(s, 6, r.quantum_ms);
  BindText(s, 7, r.gpu);
  BindText(s, 8, JobStateName(r.state));
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
  BindText(s, 19, std::string(JobKindName(r.kind)));
  BindText(s, 20, r.output);
  sqlite3_bind_int64(s, 21, r.time_limit_ms);
  sqlite3_bind_int64(s, 22, r.kill_after_ms);
  BindText(s, 23, r.dependency);
  sqlite3_bind_int(s, 24, r.held ? 1 : 0);
  BindOptional(s, 25, r.begin_time);
  BindText(s, 26, r.end_request);
  BindOptional(s, 27, r.runner_pid);
  BindOptional(s, 28, r.runner_start);
  BindText(s, 29, r.slot);
  BindText(s, 30, r.memory);
  BindText(s, 31, r.token);
  sqlite3_bind_int64(s, 32, r.gpus);
  sqlite3_bind_int64(s, 33, r.array_job_id);
  sqlite3_bind_int64(s, 34, r.array_task_id);
  sqlite3_bind_int64(s, 35, r.array_task_count);
  sqlite3_bind_int64(s, 36, r.array_task_min);
  sqlite3_bind_int64(s, 37, r.array_task_max);
  sqlite3_bind_int64(s, 38, r.array_limit);
  sqlite3_bind_int64(s, 39, ClampBytes(r.swaps_out));
  sqlite3_bind_int64(s, 40, ClampBytes(r.swaps_in));
  sqlite3_bind_int64(s, 41, r.restarts);
  sqlite3_bind_int64(s, 42, r.slurm_job_id);
  BindText(s, 43, r.slurm_step);
  BindText(s, 44, r.mail_user);
  BindText(s, 45, r.mail_type);
}

}  // namespace gshare::job_row
