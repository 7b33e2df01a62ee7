// JobRecord <-> JSON.
#include "job_json.h"

#include "config.h"
#include "dependency.h"

namespace gshare {
namespace {
template <typename T>
nlohmann::json OrNull(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
}  // namespace

nlohmann::json JobToJson(const JobRecord& r) {
  return {{"id", r.id},
          {"name", r.name},
          {"state", r.state},
          {"reason", r.reason},
          {"priority", r.priority},
          {"argv", r.argv},
          {"cwd", r.cwd},
          {"uid", r.uid},
          {"gpu", r.gpu},
          {"quantum_ms", r.quantum_ms},
          {"kind", r.kind},
          {"submit_time", r.submit_time},
          {"start_time", OrNull(r.start_time)},
          {"end_time", OrNull(r.end_time)},
          {"exit_code", OrNull(r.exit_code)},
          {"signal", OrNull(r.signal)},
          {"pid", OrNull(r.pid)},
          {"lease_seconds", r.lease_seconds},
          {"wait_seconds", r.wait_seconds},
          {"peak_bytes", r.peak_bytes},
          {"state_code", StateCode(r.state)},
          {"output", r.output},
          {"time_limit_ms", r.time_limit_ms},
          {"kill_after_ms", r.kill_after_ms},
          {"dependency", r.dependency},
          {"held", r.held},
          {"begin_time", OrNull(r.begin_time)},
          {"slot", r.slot},
          {"memory_engine", r.memory}};
}

const char* StateCode(const std::string& state) {
  static const std::pair<const char*, const char*> kCodes[] = {
      {"PENDING", "PD"}, {"RUNNING", "R"},    {"SUSPENDED", "S"}, {"COMPLETED", "CD"},
      {"FAILED", "F"},   {"CANCELLED", "CA"}, {"TIMEOUT", "TO"},  {"LOST", "LO"}};
  for (const auto& [name, code] : kCodes) {
    if (state == name) return code;
  }
  return "?";
}

nlohmann::json JobOptionsToJson(const JobRecord& r) {
  return {{"name", r.name},
          {"argv", r.argv},
          {"cwd", r.cwd},
          {"priority", r.priority},
          {"quantum_ms", r.quantum_ms},
          {"gpu", r.gpu},
          {"time_limit_ms", r.time_limit_ms},
          {"kill_after_ms", r.kill_after_ms},
          {"dependency", r.dependency},
          {"held", r.held},
          {"begin_time", OrNull(r.begin_time)},
          {"output", r.output},
          {"memory", r.memory}};
}

Status JobOptionsFromJson(const nlohmann::json& j, JobRecord* r) {
  try {
    r->name = j.at("name").get<std::string>();
    r->argv = j.at("argv").get<std::vector<std::string>>();
    r->cwd = j.at("cwd").get<std::string>();
    r->priority = j.at("priority").get<int>();
    r->quantum_ms = j.at("quantum_ms").get<int64_t>();
    r->gpu = j.at("gpu").get<std::string>();
    r->time_limit_ms = j.value("time_limit_ms", int64_t{0});
    r->kill_after_ms = j.value("kill_after_ms", int64_t{30'000});
    r->dependency = j.value("dependency", std::string());
    r->held = j.value("held", false);
    if (j.contains("begin_time") && !j.at("begin_time").is_null()) {
      r->begin_time = j.at("begin_time").get<double>();
    }
    r->output = j.value("output", std::string());
    r->memory = j.value("memory", std::string());
  } catch (const nlohmann::json::exception& e) {
    return Status::Error(std::string("bad job options: ") + e.what());
  }
  if (r->argv.empty()) return Status::Error("bad job options: empty argv");
  if (r->priority < kMinPriority || r->priority > kMaxPriority || r->quantum_ms < 0 ||
      r->time_limit_ms < 0 || r->kill_after_ms < 0) {
    return Status::Error("bad job options: priority, quantum or time out of range");
  }
  if (!r->memory.empty() && !IsMemoryEngine(r->memory)) {
    return Status::Error("bad job options: unknown memory engine \"" + r->memory + "\"");
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
