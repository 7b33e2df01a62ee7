// JobRecord <-> the jobs table's columns.
#include "store/job_row.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "model/job_fields.h"

namespace gshare::job_row {
namespace {

// Every column but id, in the field table's order: BindRecord binds them as ?1..?kNumWritable
// and ReadRow reads them after id.
constexpr const char* kWritableColumns[] = {
#define GS_COLUMN(member, column, key, shown, in_runs) column,
    GS_JOB_FIELDS(GS_COLUMN)
#undef GS_COLUMN
};
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

// One column's value into a JobRecord member, by the member's type. Fails only on text that no
// gshare writes (a hand-edited row).
Status ReadColumn(sqlite3_stmt* stmt, int col, std::string* out) {
  *out = ColumnText(stmt, col);
  return Status::Ok();
}
Status ReadColumn(sqlite3_stmt* stmt, int col, std::vector<std::string>* out) {
  // Not the throwing parse: a hand-edited row must give an error, not an exception.
  nlohmann::json argv = nlohmann::json::parse(ColumnText(stmt, col), nullptr, false);
  if (!argv.is_array()) return Status::Error("argv is not a JSON array");
  for (const nlohmann::json& arg : argv) {
    if (!arg.is_string()) return Status::Error("argv holds a non-string");
    out->push_back(arg.get<std::string>());
  }
  return Status::Ok();
}
template <typename T>
requires std::is_integral_v<T> || std::is_floating_point_v<T> Status ReadColumn(sqlite3_stmt* stmt,
                                                                                int col, T* out) {
  if constexpr (std::is_same_v<T, bool>)
    *out = sqlite3_column_int(stmt, col) != 0;
  else if constexpr (std::is_floating_point_v<T>)
    *out = sqlite3_column_double(stmt, col);
  else
    *out = static_cast<T>(sqlite3_column_int64(stmt, col));
  return Status::Ok();
}
template <typename T>
Status ReadColumn(sqlite3_stmt* stmt, int col, std::optional<T>* out) {
  *out = ColumnOptional<T>(stmt, col);
  return Status::Ok();
}
Status ReadColumn(sqlite3_stmt* stmt, int col, JobState* out) {
  const std::string name = ColumnText(stmt, col);
  std::optional<JobState> known = JobStateFromName(name);
  if (!known) return Status::Error("unknown job state \"" + name + "\"");
  *out = *known;
  return Status::Ok();
}
// The engine's name; "" for none (the config's).
Status ReadColumn(sqlite3_stmt* stmt, int col, std::optional<MemoryEngine>* out) {
  const std::string name = ColumnText(stmt, col);
  out->reset();
  if (name.empty()) return Status::Ok();
  *out = ParseMemoryEngine(name);
  if (!*out) return Status::Error("unknown memory engine \"" + name + "\"");
  return Status::Ok();
}
Status ReadColumn(sqlite3_stmt* stmt, int col, JobKind* out) {
  const std::string name = ColumnText(stmt, col);
  std::optional<JobKind> known = ParseJobKind(name);
  if (!known) return Status::Error("unknown job kind \"" + name + "\"");
  *out = *known;
  return Status::Ok();
}

// One member as its column's value, by the member's type (?index).
void BindColumn(sqlite3_stmt* s, int index, const std::string& v) { BindText(s, index, v); }
void BindColumn(sqlite3_stmt* s, int index, const std::vector<std::string>& v) {
  BindText(s, index, StringsToJson(v));
}
void BindColumn(sqlite3_stmt* s, int index, JobState v) { BindText(s, index, JobStateName(v)); }
void BindColumn(sqlite3_stmt* s, int index, const std::optional<MemoryEngine>& v) {
  BindText(s, index, v ? std::string(MemoryEngineName(*v)) : std::string());
}
void BindColumn(sqlite3_stmt* s, int index, JobKind v) {
  BindText(s, index, std::string(JobKindName(v)));
}
template <typename T>
requires std::is_integral_v<T> || std::is_floating_point_v<T>
void BindColumn(sqlite3_stmt* s, int index, T v) {
  if constexpr (std::is_floating_point_v<T>)
    sqlite3_bind_double(s, index, v);
  else if constexpr (std::is_same_v<T, uint64_t>)
    sqlite3_bind_int64(s, index, ClampBytes(v));
  else
    sqlite3_bind_int64(s, index, static_cast<int64_t>(v));
}
template <typename T>
void BindColumn(sqlite3_stmt* s, int index, const std::optional<T>& v) {
  BindOptional(s, index, v);
}

}  // namespace

Result<JobRecord> ReadRow(sqlite3_stmt* stmt) {
  JobRecord r;
  r.id = sqlite3_column_int64(stmt, 0);
  int col = 0;
  Status st = Status::Ok();
#define GS_READ(member, column, key, shown, in_runs) \
  if (st.ok()) st = ReadColumn(stmt, ++col, &r.member);
  GS_JOB_FIELDS(GS_READ)
#undef GS_READ
  if (!st.ok()) return Status::Error("job " + std::to_string(r.id) + ": " + st.message());
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
  int index = 0;
#define GS_BIND(member, column, key, shown, in_runs) BindColumn(s, ++index, r.member);
  GS_JOB_FIELDS(GS_BIND)
#undef GS_BIND
}

}  // namespace gshare::job_row
