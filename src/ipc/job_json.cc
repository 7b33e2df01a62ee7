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
  return {{"name", r.name},
          {"argv", r.argv},
          {"cwd", r.cwd},
          {"priority", r.priority},
          {"quantum_ms", r.quantum_ms},
          {"gpu", r.gpu},
          {"gpus", r.gpus},
          {"time_limit_ms", r.time_limit_ms},
          {"kill_after_ms", r.kill_after_ms},
          {"dependency", r.dependency},
          {"held", r.held},
          {"begin_time", FieldJson(r.begin_time)},
          {"output", r.output},
          {"memory", FieldJson(r.memory)},
          {"mail_user", r.mail_user},
          {"mail_type", r.mail_type},
          {"error", r.error},
          {"open_append", r.open_append},
          {"warn_signal", r.warn_signal},
          {"warn_ms", r.warn_ms},
          {"warn_main_only", r.warn_main_only}};
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

Status ReadFields(const json& j, JobRecord* r, int gpu_count) {
  if (!j.is_object()) return Status::Error("bad job options: not a JSON object");
  const int64_t max_ms = kMaxDuration.count();
  auto argv = j.find("argv");
  if (argv == j.end() || !argv->is_array()) return BadField("argv", "must be an array of strings");
  r->argv.clear();
  for (const json& a : *argv) {
    if (!a.is_string()) return BadField("argv", "must be an array of strings");
    const std::string& v = a.get_ref<const std::string&>();
    if (v.find('\0') != std::string::npos) return BadField("argv", "contains a NUL byte");
    r->argv.push_back(v);
  }
  if (r->argv.empty()) return Status::Error("bad job options: empty argv");
  int64_t priority = 0, quantum = 0, time_limit = 0, kill_after = 30'000, gpus = 1;
  int64_t warn_signal = 0, warn_ms = 0;
  std::string memory;
  std::vector<Status> checks = {
      ReadString(j, "name", true, &r->name),
      ReadString(j, "cwd", true, &r->cwd),
      ReadInt(j, "priority", true, kMinPriority, kMaxPriority, &priority),
      ReadInt(j, "quantum_ms", true, 1, max_ms, &quantum),
      ReadString(j, "gpu", true, &r->gpu),
      ReadInt(j, "gpus", false, 1, kMaxJobGpus, &gpus),
      ReadInt(j, "time_limit_ms", false, 0, max_ms, &time_limit),
      ReadInt(j, "kill_after_ms", false, 0, max_ms, &kill_after),
      ReadString(j, "dependency", false, &r->dependency),
      ReadBool(j, "held", &r->held),
      ReadString(j, "output", false, &r->output),
      ReadString(j, "memory", false, &memory),
      ReadString(j, "mail_user", false, &r->mail_user),
      ReadString(j, "mail_type", false, &r->mail_type),
      ReadString(j, "error", false, &r->error),
      ReadBool(j, "open_append", &r->open_append),
      ReadInt(j, "warn_signal", false, 0, NSIG - 1, &warn_signal),
      ReadInt(j, "warn_ms", false, 0, int64_t{kMaxSignalLeadSeconds} * 1000, &warn_ms),
      ReadBool(j, "warn_main_only", &r->warn_main_only),
  };
  for (const Status& st : checks) {
    if (!st.ok()) return st;
  }
  r->priority = static_cast<int>(priority);
  r->quantum_ms = quantum;
  r->time_limit_ms = time_limit;
  r->kill_after_ms = kill_after;
  r->gpus = static_cast<int>(gpus);
  r->warn_signal = static_cast<int>(warn_signal);
  r->warn_ms = warn_ms;
  if (r->warn_signal > 0 && r->time_limit_ms == 0) {
    return BadField("warn_signal", "needs a time limit");
  }
  r->memory.reset();
  if (!memory.empty()) {
    r->memory = ParseMemoryEngine(memory);
    if (!r->memory) return BadField("memory", "names no memory engine (" + memory + ")");
  }
  auto begin = j.find("begin_time");
  if (begin != j.end() && !begin->is_null()) {
    if (!begin->is_number() || begin->is_boolean()) {
      return BadField("begin_time", "must be a number");
    }
    double b = begin->get<double>();
    double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    if (!(b >= 0 && b <= now + static_cast<double>(max_ms) / 1000.0)) {
      return BadField("begin_time", "out of range");
    }
    r->begin_time = b;
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
