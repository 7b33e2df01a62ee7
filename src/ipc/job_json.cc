// JobRecord <-> JSON.
#include "ipc/job_json.h"

#include <chrono>
#include <csignal>
#include <exception>

#include "base/config.h"
#include "policy/dependency.h"
#include "base/duration.h"
#include "base/gpu_inventory.h"
#include "base/mail_type.h"
#include "base/signal_spec.h"
#include "model/job_fields.h"

namespace gshare {
namespace {

// One member as JSON, by its type: optionals null when empty, enums by name.
template <typename T>
nlohmann::json FieldJson(const T& v) {
  return nlohmann::json(v);
}
template <typename T>
nlohmann::json FieldJson(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
nlohmann::json FieldJson(JobState v) { return JobStateName(v); }
nlohmann::json FieldJson(JobKind v) { return std::string(JobKindName(v)); }
// The engine's name; "" for the config's.
nlohmann::json FieldJson(const std::optional<MemoryEngine>& v) {
  return v ? std::string(MemoryEngineName(*v)) : std::string();
}

// Whether a field whose rule is `shown` carries its value for `r` (else null); kNever fields are
// left out before this is asked.
bool Carried(const JobRecord& r, JobFieldShown shown) {
  switch (shown) {
    case JobFieldShown::kArrayTask: return r.IsArrayTask();
    case JobFieldShown::kSlurm: return r.kind == JobKind::kSlurm;
    default: return true;
  }
}

// The fields of the table (model/job_fields.h) whose rule is not kNever, and only those with
// in_runs when `runs_only`.
nlohmann::json FieldsToJson(const JobRecord& r, bool runs_only) {
  nlohmann::json j = {{"id", r.id}};
#define GS_TO_JSON(member, column, key, shown, in_runs)                                 \
  if (JobFieldShown::shown != JobFieldShown::kNever && (in_runs || !runs_only)) {       \
    j[key] = Carried(r, JobFieldShown::shown) ? FieldJson(r.member) : nlohmann::json(); \
  }
  GS_JOB_FIELDS(GS_TO_JSON)
#undef GS_TO_JSON
  return j;
}

// The job options (kRunRegister, kSubmit), one row each: X(member, json_key, required, lo,
// hi). `lo`..`hi` is the range of an integer member (unused for others). JobOptionsToJson and
// the reading half of JobOptionsFromJson are generated from it, each member by its type
// (ReadOption); the rules that tie fields together follow in ReadFields. Adding an option is a
// row here (and its member's row in model/job_fields.h).
constexpr int64_t kMaxMs = kMaxDuration.count();
// clang-format off
#define GS_JOB_OPTIONS(X)                                                                \
  X(argv,           "argv",           true,  0, 0)                                     \
  X(name,           "name",           true,  0, 0)                                     \
  X(cwd,            "cwd",            true,  0, 0)                                     \
  X(priority,       "priority",       true,  kMinPriority, kMaxPriority)               \
  X(quantum_ms,     "quantum_ms",     true,  1, kMaxMs)                                \
  X(gpu,            "gpu",            true,  0, 0)                                     \
  X(gpus,           "gpus",           false, 1, kMaxJobGpus)                           \
  X(time_limit_ms,  "time_limit_ms",  false, 0, kMaxMs)                                \
  X(kill_after_ms,  "kill_after_ms",  false, 0, kMaxMs)                                \
  X(dependency,     "dependency",     false, 0, 0)                                     \
  X(held,           "held",           false, 0, 0)                                     \
  X(begin_time,     "begin_time",     false, 0, 0)                                     \
  X(output,         "output",         false, 0, 0)                                     \
  X(memory,         "memory",         false, 0, 0)                                     \
  X(mail_user,      "mail_user",      false, 0, 0)                                     \
  X(mail_type,      "mail_type",      false, 0, 0)                                     \
  X(error,          "error",          false, 0, 0)                                     \
  X(open_append,    "open_append",    false, 0, 0)                                     \
  X(warn_signal,    "warn_signal",    false, 0, NSIG - 1)                              \
  X(warn_ms,        "warn_ms",        false, 0, int64_t{kMaxSignalLeadSeconds} * 1000) \
  X(warn_main_only, "warn_main_only", false, 0, 0)
// clang-format on

}  // namespace

nlohmann::json JobToJson(const JobRecord& r) {
  nlohmann::json j = FieldsToJson(r, /*runs_only=*/false);
  j["state_code"] = JobStateCode(r.state);
  return j;
}

nlohmann::json RunToJson(const JobRun& run) {
  nlohmann::json j = FieldsToJson(run.job, /*runs_only=*/true);
  j["requeued"] = run.requeued;
  return j;
}

nlohmann::json JobOptionsToJson(const JobRecord& r) {
  nlohmann::json j = nlohmann::json::object();
#define GS_OPTION_TO_JSON(member, key, required, lo, hi) j[key] = FieldJson(r.member);
  GS_JOB_OPTIONS(GS_OPTION_TO_JSON)
#undef GS_OPTION_TO_JSON
  return j;
}

namespace {

using json = nlohmann::json;

Status BadField(const char* key, const std::string& why) {
  return Status::Error(std::string("bad job options: \"") + key + "\" " + why);
}

// A string without NUL bytes (they would cut a path or an argument short at exec).
Status ReadString(const json& j, const char* key, bool required, std::string* out) {
  auto it = j.find(key);
  if (it == j.end() || (!required && it->is_null())) {
    return required ? BadField(key, "is missing") : Status::Ok();
  }
  if (!it->is_string()) return BadField(key, "must be a string");
  const std::string& v = it->get_ref<const std::string&>();
  if (v.find('\0') != std::string::npos) return BadField(key, "contains a NUL byte");
  *out = v;
  return Status::Ok();
}

// An integer (not a float, not a boolean) within [lo, hi].
Status ReadInt(const json& j, const char* key, bool required, int64_t lo, int64_t hi,
               int64_t* out) {
  auto it = j.find(key);
  if (it == j.end() || (!required && it->is_null())) {
    return required ? BadField(key, "is missing") : Status::Ok();
  }
  if (!it->is_number_integer()) return BadField(key, "must be an integer");
  bool in_range;
  int64_t v = 0;
  if (it->is_number_unsigned()) {
    uint64_t u = it->get<uint64_t>();
    in_range = u <= static_cast<uint64_t>(hi);
    v = static_cast<int64_t>(in_range ? u : 0);
  } else {
    v = it->get<int64_t>();
    in_range = true;
  }
  if (!in_range || v < lo || v > hi) {
    return BadField(key, "must be within [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  *out = v;
  return Status::Ok();
}

Status ReadBool(const json& j, const char* key, bool* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_boolean()) return BadField(key, "must be true or false");
  *out = it->get<bool>();
  return Status::Ok();
}

// One option by its member's type; an absent (or, when not required, null) option leaves
// the member as it was. Integers must lie in [lo, hi].
Status ReadOption(const json& j, const char* key, bool required, int64_t, int64_t,
                  std::string* out) {
  return ReadString(j, key, required, out);
}
Status ReadOption(const json& j, const char* key, bool required, int64_t lo, int64_t hi,
                  int64_t* out) {
  return ReadInt(j, key, required, lo, hi, out);
}
Status ReadOption(const json& j, const char* key, bool required, int64_t lo, int64_t hi, int* out) {
  int64_t v = *out;
  Status st = ReadInt(j, key, required, lo, hi, &v);
  *out = static_cast<int>(v);
  return st;
}
Status ReadOption(const json& j, const char* key, bool, int64_t, int64_t, bool* out) {
  return ReadBool(j, key, out);
}
Status ReadOption(const json& j, const char* key, bool, int64_t, int64_t,
                  std::vector<std::string>* out) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return BadField(key, "must be an array of strings");
  out->clear();
  for (const json& a : *it) {
    if (!a.is_string()) return BadField(key, "must be an array of strings");
    const std::string& v = a.get_ref<const std::string&>();
    if (v.find('\0') != std::string::npos) return BadField(key, "contains a NUL byte");
    out->push_back(v);
  }
  return Status::Ok();
}
// begin_time: unix seconds, from 0 to kMaxDuration from now.
Status ReadOption(const json& j, const char* key, bool, int64_t, int64_t,
                  std::optional<double>* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  if (!it->is_number() || it->is_boolean()) return BadField(key, "must be a number");
  double b = it->get<double>();
  double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (!(b >= 0 && b <= now + static_cast<double>(kMaxMs) / 1000.0)) {
    return BadField(key, "out of range");
  }
  *out = b;
  return Status::Ok();
}
// A memory engine by name; "" (or absent): the config's.
Status ReadOption(const json& j, const char* key, bool required, int64_t, int64_t,
                  std::optional<MemoryEngine>* out) {
  std::string name;
  if (Status st = ReadString(j, key, required, &name); !st.ok()) return st;
  out->reset();
  if (name.empty()) return Status::Ok();
  *out = ParseMemoryEngine(name);
  if (!*out) return BadField(key, "names no memory engine (" + name + ")");
  return Status::Ok();
}

Status ReadFields(const json& j, JobRecord* r, int gpu_count) {
  if (!j.is_object()) return Status::Error("bad job options: not a JSON object");
#define GS_READ_OPTION(member, key, required, lo, hi) \
  if (Status st = ReadOption(j, key, required, lo, hi, &r->member); !st.ok()) return st;
  GS_JOB_OPTIONS(GS_READ_OPTION)
#undef GS_READ_OPTION
  if (r->argv.empty()) return Status::Error("bad job options: empty argv");
  if (r->warn_signal > 0 && r->time_limit_ms == 0) {
    return BadField("warn_signal", "needs a time limit");
  }
  // What the [notify] command gets: one line each, as the CLI made it.
  if (!CheckMailUser(r->mail_user).ok()) {
    return BadField("mail_user", "must be one line of at most 256 bytes");
  }
  if (Result<std::string> types = ParseMailTypes(r->mail_type.empty() ? "NONE" : r->mail_type);
      !types.ok() || types.value() != r->mail_type) {
    return BadField("mail_type", "must be a canonical list of mail types");
  }
  if (Status g = CheckGpuRequest(r->gpu, r->gpus, gpu_count); !g.ok()) {
    return Status::Error("bad job options: " + g.message());
  }
  return Status::Ok();
}

}  // namespace

Status JobOptionsFromJson(const nlohmann::json& j, JobRecord* r, int gpu_count) {
  try {
    Status st = ReadFields(j, r, gpu_count);
    if (!st.ok()) return st;
  } catch (const std::exception& e) {  // not expected: every access above is type-checked
    return Status::Error(std::string("bad job options: ") + e.what());
  }
  if (!r->cwd.empty() && r->cwd.front() != '/') {
    return Status::Error("bad job options: cwd is not absolute");
  }
  if (!r->dependency.empty()) {
    Result<std::vector<Dependency>> deps = ParseDependencies(r->dependency);
    if (!deps.ok()) return Status::Error("bad job options: " + deps.status().message());
    r->dependency = FormatDependencies(deps.value());
  }
  if (r->name.empty()) r->name = r->argv[0];
  return Status::Ok();
}

}  // namespace gshare
