#include "ipc/requests.h"

#include <unistd.h>

#include <csignal>

#include "base/config.h"
#include "ipc/job_json.h"
#include "ipc/json_fields.h"

namespace gshare {
using json = nlohmann::json;

json JobControlRequest::ToJson() const {
  json j{{"action", action}, {"ids", ids}};
  if (!exact_ids.empty()) j["exact_ids"] = exact_ids;
  if (action == "set-priority") j["priority"] = priority;
  if (action == "signal") j["signal"] = signal;
  if (action == "resume" && !gpu.empty()) j["gpu"] = gpu;
  if (action == "update") {
    if (update.name) j["name"] = *update.name;
    if (update.time_limit_ms) j["time_limit_ms"] = *update.time_limit_ms;
    if (update.dependency) j["dependency"] = *update.dependency;
    if (update.begin_time) j["begin_time"] = *update.begin_time;
  }
  return j;
}

namespace {

// The fields of an "update": at least one, each typed and in range.
Result<JobControlRequest::Update> ParseUpdate(const json& j) {
  JobControlRequest::Update u;
  if (j.contains("name")) {
    Result<std::string> name = StringField(j, "name");
    if (!name.ok()) return name.status();
    if (name->empty() || name->size() > kMaxUpdateName) {
      return Status::Error("\"name\" must be 1 to " + std::to_string(kMaxUpdateName) + " bytes");
    }
    u.name = name.value();
  }
  Result<std::optional<int64_t>> limit = OptionalInt(j, "time_limit_ms", 0, INT64_MAX / 2);
  if (!limit.ok()) return limit.status();
  u.time_limit_ms = limit.value();
  if (j.contains("dependency")) {
    Result<std::string> dep = StringField(j, "dependency");
    if (!dep.ok()) return dep.status();
    u.dependency = dep.value();
  }
  if (j.contains("begin_time")) {
    const json& b = j.at("begin_time");
    if (!b.is_number() || b.get<double>() < 0 || b.get<double>() > 1e11) {
      return Status::Error("\"begin_time\" must be unix seconds");
    }
    u.begin_time = b.get<double>();
  }
  if (u == JobControlRequest::Update{}) return Status::Error("an update must change something");
  return u;
}

}  // namespace

Result<JobControlRequest> JobControlRequest::Parse(const json& j) {
  JobControlRequest r;
  Result<std::string> action = StringField(j, "action");
  if (!action.ok()) return action.status();
  r.action = action.value();
  auto ids = j.find("ids");
  if (ids == j.end() || !ids->is_array()) return Status::Error("\"ids\" must be a list of job ids");
  auto tasks = j.find("exact_ids");
  if (tasks != j.end() && !tasks->is_array()) {
    return Status::Error("\"exact_ids\" must be a list of job ids");
  }
  const size_t count = ids->size() + (tasks != j.end() ? tasks->size() : 0);
  if (count > kMaxControlIds) {
    return Status::Error("too many job ids in one request (" + std::to_string(count) + " > " +
                         std::to_string(kMaxControlIds) + ")");
  }
  for (const auto& [list, out] : {std::pair{ids, &r.ids}, std::pair{tasks, &r.exact_ids}}) {
    if (list == j.end()) continue;
    for (const json& id : *list) {
      std::optional<int64_t> v = AsInt64(id);
      if (!v || *v <= 0) return Status::Error("\"ids\" must hold positive job ids");
      out->push_back(*v);
    }
  }
  if (r.action == "set-priority") {
    Result<int64_t> p = IntField(j, "priority", kMinPriority, kMaxPriority);
    if (!p.ok()) return p.status();
    r.priority = static_cast<int>(p.value());
  } else if (r.action == "signal") {
    Result<int64_t> s = IntField(j, "signal", 1, NSIG - 1);
    if (!s.ok()) return s.status();
    r.signal = static_cast<int>(s.value());
  } else if (r.action == "resume" && j.contains("gpu")) {
    Result<std::string> gpu = StringField(j, "gpu");
    if (!gpu.ok()) return gpu.status();
    if (gpu->empty() || gpu->size() > 64) return Status::Error("\"gpu\" must name one GPU");
    r.gpu = gpu.value();
  } else if (r.action == "update") {
    Result<Update> u = ParseUpdate(j);
    if (!u.ok()) return u.status();
    r.update = u.value();
  } else if (r.action != "cancel" && r.action != "requeue" && r.action != "hold" &&
             r.action != "release" && r.action != "suspend" && r.action != "resume") {
    return Status::Error("unknown action \"" + r.action + "\"");
  }
  return r;
}

json CleanRequest::ToJson() const { return json{{"older_than_ms", older_than_ms}}; }

Result<CleanRequest> CleanRequest::Parse(const json& j) {
  Result<std::optional<int64_t>> ms = OptionalInt(j, "older_than_ms", 0, INT64_MAX);
  if (!ms.ok()) return ms.status();
  CleanRequest r;
  r.older_than_ms = ms.value().value_or(0);
  return r;
}

json RunStartedRequest::ToJson() const { return json{{"job_id", job_id}, {"pid", pid}}; }

Result<RunStartedRequest> RunStartedRequest::Parse(const json& j) {
  Result<int64_t> id = IntField(j, "job_id", 1, kMaxJobId);
  if (!id.ok()) return id.status();
  Result<int64_t> pid = IntField(j, "pid", 2, INT32_MAX);
  if (!pid.ok()) return pid.status();
  return RunStartedRequest{id.value(), static_cast<pid_t>(pid.value())};
}

json RunEndedRequest::ToJson() const {
  json j = JobEndToJson(end, job_id);
  if (!token.empty()) j["token"] = token;
  return j;
}

Result<RunEndedRequest> RunEndedRequest::Parse(const json& j) {
  Result<int64_t> id = IntField(j, "job_id", 1, kMaxJobId);
  if (!id.ok()) return id.status();
  Result<std::optional<int64_t>> code = OptionalInt(j, "exit_code", 0, 255);
  if (!code.ok()) return code.status();
  Result<std::optional<int64_t>> sig = OptionalInt(j, "signal", 1, NSIG - 1);
  if (!sig.ok()) return sig.status();
  RunEndedRequest r;
  r.job_id = id.value();
  r.end = JobEndFromJson(j);  // its own checks; the ranges above refuse what it would keep
  if (auto it = j.find("token"); it != j.end() && !it->is_null()) {
    if (!it->is_string() || it->get_ref<const std::string&>().size() > 64) {
      return Status::Error("\"token\" must be a job's token");
    }
    r.token = it->get<std::string>();
  }
  return r;
}

json RunAttachRequest::ToJson() const { return json{{"job_id", job_id}}; }

json RunRegisterRequest::ToJson() const {
  json j = JobOptionsToJson(job);
  j["pid"] = getpid();
  if (job.mps_isolation) j["mps_isolation"] = true;
  return j;
}

Result<RunRegisterRequest> RunRegisterRequest::Parse(const json& j, int gpu_count) {
  RunRegisterRequest r;
  if (Status st = JobOptionsFromJson(j, &r.job, gpu_count); !st.ok()) return st;
  if (auto it = j.find("mps_isolation"); it != j.end()) {
    if (!it->is_boolean()) return Status::Error("bad job options: mps_isolation is not a boolean");
    r.job.mps_isolation = it->get<bool>();
  }
  return r;
}

json SubmitRequest::ToJson() const {
  json j = JobOptionsToJson(job);
  j["env"] = env;
  j["script"] = script ? json(*script) : json(nullptr);
  if (!submit_key.empty()) j["submit_key"] = submit_key;
  if (!array.empty()) j["array"] = array;
  return j;
}

Result<SubmitRequest> SubmitRequest::Parse(const json& j, int gpu_count) {
  SubmitRequest r;
  if (Status st = JobOptionsFromJson(j, &r.job, gpu_count); !st.ok()) return st;
  Result<std::vector<std::string>> env = StringListField(j, "env");
  if (!env.ok()) return Status::Error("bad submission: " + env.status().message());
  r.env = std::move(env.value());
  if (auto it = j.find("script"); it != j.end() && !it->is_null()) {
    if (!it->is_string()) return Status::Error("bad submission: \"script\" must be a string");
    r.script = it->get<std::string>();
  }
  for (auto [key, out] : {std::pair{"submit_key", &r.submit_key}, {"array", &r.array}}) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_string()) {
      return Status::Error(std::string("bad submission: \"") + key + "\" must be a string");
    }
    *out = it->get<std::string>();
  }
  if (r.submit_key.size() > kMaxSubmitKey) return Status::Error("submit_key is too long");
  return r;
}

Result<RunAttachRequest> RunAttachRequest::Parse(const json& j) {
  Result<int64_t> id = IntField(j, "job_id", 1, kMaxJobId);
  if (!id.ok()) return id.status();
  return RunAttachRequest{id.value()};
}

json SchedulerSetRequest::ToJson() const { return json{{"enabled", enabled}}; }

Result<SchedulerSetRequest> SchedulerSetRequest::Parse(const json& j) {
  Result<bool> enabled = BoolField(j, "enabled");
  if (!enabled.ok()) return enabled.status();
  return SchedulerSetRequest{enabled.value()};
}

json QueueSetRequest::ToJson() const {
  json j = json::object();
  if (paused) j["paused"] = *paused;
  if (max_running) j["max_running"] = *max_running;
  return j;
}

Result<QueueSetRequest> QueueSetRequest::Parse(const json& j) {
  QueueSetRequest r;
  if (j.is_object() && j.contains("paused")) {
    Result<bool> paused = BoolField(j, "paused");
    if (!paused.ok()) return paused.status();
    r.paused = paused.value();
  }
  Result<std::optional<int64_t>> n = OptionalInt(j, "max_running", 0, 1000);
  if (!n.ok()) return n.status();
  if (n.value()) r.max_running = static_cast<int>(*n.value());
  if (!r.paused && !r.max_running) return Status::Error("nothing to set (paused, max_running)");
  return r;
}

json StatusRequest::ToJson() const {
  json j = job_id ? json{{"job_id", *job_id}} : json::object();
  if (brief) j["brief"] = true;
  return j;
}

Result<StatusRequest> StatusRequest::Parse(const json& j) {
  Result<std::optional<int64_t>> id = OptionalInt(j, "job_id", 1, kMaxJobId);
  if (!id.ok()) return id.status();
  StatusRequest request{id.value()};
  if (j.contains("brief")) {
    Result<bool> brief = BoolField(j, "brief");
    if (!brief.ok()) return brief.status();
    request.brief = brief.value();
  }
  return request;
}

namespace {

// The length of Slurm names (job names, partitions, QOS) a request may carry (bytes).
constexpr size_t kMaxSlurmName = 256;

Result<std::string> ShortString(const json& j, const char* key) {
  Result<std::string> s = StringField(j, key);
  if (s.ok() && s.value().size() > kMaxSlurmName) {
    return Status::Error(std::string("\"") + key + "\" is too long");
  }
  return s;
}

}  // namespace

json SlurmStepRequest::ToJson() const { return json{{"gpus", gpus}, {"name", name}}; }

Result<SlurmStepRequest> SlurmStepRequest::Parse(const json& j) {
  Result<std::string> gpus = ShortString(j, "gpus");
  if (!gpus.ok()) return gpus.status();
  Result<std::string> name = ShortString(j, "name");
  if (!name.ok()) return name.status();
  return SlurmStepRequest{gpus.value(), name.value()};
}

json SlurmJobRequest::ToJson() const {
  return json{
      {"action", action}, {"job_id", job_id}, {"uid", uid}, {"partition", partition}, {"qos", qos}};
}

Result<SlurmJobRequest> SlurmJobRequest::Parse(const json& j) {
  Result<std::string> action = StringField(j, "action");
  if (!action.ok()) return action.status();
  if (action.value() != "begin" && action.value() != "end") {
    return Status::Error("\"action\" must be \"begin\" or \"end\"");
  }
  Result<int64_t> id = IntField(j, "job_id", 1, kMaxJobId);
  if (!id.ok()) return id.status();
  Result<int64_t> uid = IntField(j, "uid", 0, UINT32_MAX - 1);
  if (!uid.ok()) return uid.status();
  Result<std::string> partition = ShortString(j, "partition");
  if (!partition.ok()) return partition.status();
  Result<std::string> qos = ShortString(j, "qos");
  if (!qos.ok()) return qos.status();
  return SlurmJobRequest{action.value(), id.value(), static_cast<uint32_t>(uid.value()),
                         partition.value(), qos.value()};
}

}  // namespace gshare
