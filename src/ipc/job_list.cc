#include "ipc/job_list.h"

#include <exception>

namespace gshare {

using json = nlohmann::json;

json ListJobsRequest::ToJson() const {
  if (job_id) return json{{"job_id", *job_id}};
  if (runs) {
    json states = json::array();
    for (JobState s : runs->states) states.push_back(JobStateName(s));
    json r{{"since", runs->since},       {"until", runs->until},
           {"states", states},           {"requeued", runs->requeued},
           {"after_id", runs->after_id}, {"max_rows", runs->max_rows}};
    if (runs->uid) r["uid"] = *runs->uid;
    return json{{"runs", r}};
  }
  json states = json::array();
  for (JobState s : filter.states) states.push_back(JobStateName(s));
  json j{{"states", states},
         {"name", filter.name},
         {"order", filter.order == ListFilter::Order::kQueueOrder ? "queue" : "newest"},
         {"limit", filter.limit}};
  if (filter.uid) j["uid"] = *filter.uid;
  if (filter.array_job_id) j["array_job_id"] = *filter.array_job_id;
  return j;
}

Result<ListJobsRequest> ListJobsRequest::Parse(const json& j) {
  ListJobsRequest r;
  try {
    if (j.contains("job_id")) {
      const json& id = j.at("job_id");
      if (!id.is_number_integer() || id.get<int64_t>() <= 0) {
        return Status::Error("bad list request: \"job_id\" must be a positive integer");
      }
      r.job_id = id.get<int64_t>();
      return r;
    }
    if (j.contains("runs")) {
      const json& q = j.at("runs");
      RunFilter f;
      f.since = q.at("since").get<double>();
      f.until = q.at("until").get<double>();
      for (const json& s : q.value("states", json::array())) {
        std::optional<JobState> state =
            s.is_string() ? JobStateFromName(s.get<std::string>()) : std::nullopt;
        if (!state) return Status::Error("bad list request: unknown state " + s.dump());
        f.states.insert(*state);
      }
      f.requeued = q.value("requeued", false);
      if (q.contains("uid") && !q.at("uid").is_null()) f.uid = q.at("uid").get<uint32_t>();
      f.after_id = q.value("after_id", int64_t{0});
      f.max_rows = q.value("max_rows", 0);
      if (f.max_rows < 0) return Status::Error("bad list request: \"max_rows\" must be >= 0");
      r.runs = f;
      return r;
    }
    for (const json& s : j.value("states", json::array())) {
      std::optional<JobState> state =
          s.is_string() ? JobStateFromName(s.get<std::string>()) : std::nullopt;
      if (!state) return Status::Error("bad list request: unknown state " + s.dump());
      r.filter.states.insert(*state);
    }
    r.filter.name = j.value("name", std::string());
    if (j.contains("uid") && !j.at("uid").is_null()) r.filter.uid = j.at("uid").get<uint32_t>();
    if (j.contains("array_job_id")) {
      const json& a = j.at("array_job_id");
      if (!a.is_number_integer() || a.get<int64_t>() <= 0) {
        return Status::Error("bad list request: \"array_job_id\" must be a positive integer");
      }
      r.filter.array_job_id = a.get<int64_t>();
    }
    const std::string order = j.value("order", std::string("newest"));
    if (order != "queue" && order != "newest") {
      return Status::Error("bad list request: \"order\" must be \"queue\" or \"newest\"");
    }
    r.filter.order =
        order == "queue" ? ListFilter::Order::kQueueOrder : ListFilter::Order::kNewestFirst;
    r.filter.limit = j.value("limit", 0);
    if (r.filter.limit < 0) return Status::Error("bad list request: \"limit\" must be >= 0");
  } catch (const std::exception& e) {
    return Status::Error(std::string("bad list request: ") + e.what());
  }
  return r;
}

namespace {

template <typename T>
void ReadOptional(const json& j, const char* key, std::optional<T>* out) {
  auto it = j.find(key);
  if (it != j.end() && !it->is_null()) *out = it->get<T>();
}

}  // namespace

Result<JobRecord> JobFromJson(const json& j) {
  JobRecord r;
  try {
    r.id = j.at("id").get<int64_t>();
    r.name = j.value("name", std::string());
    std::optional<JobState> state = JobStateFromName(j.at("state").get<std::string>());
    if (!state) return Status::Error("job " + std::to_string(r.id) + ": unknown state");
    r.state = *state;
    r.reason = j.value("reason", std::string());
    r.priority = j.value("priority", 0);
    r.argv = j.value("argv", std::vector<std::string>());
    r.cwd = j.value("cwd", std::string());
    r.uid = j.value("uid", uint32_t{0});
    r.gpu = j.value("gpu", std::string());
    r.quantum_ms = j.value("quantum_ms", int64_t{0});
    r.kind = ParseJobKind(j.value("kind", std::string("submit"))).value_or(JobKind::kSubmit);
    r.gpus = j.value("gpus", 1);
    r.submit_time = j.value("submit_time", 0.0);
    ReadOptional(j, "start_time", &r.start_time);
    ReadOptional(j, "end_time", &r.end_time);
    ReadOptional(j, "exit_code", &r.exit_code);
    ReadOptional(j, "signal", &r.signal);
    ReadOptional(j, "pid", &r.pid);
    r.lease_seconds = j.value("lease_seconds", 0.0);
    r.wait_seconds = j.value("wait_seconds", 0.0);
    r.peak_bytes = j.value("peak_bytes", uint64_t{0});
    r.swaps_out = j.value("swaps_out", uint64_t{0});
    r.swaps_in = j.value("swaps_in", uint64_t{0});
    r.restarts = j.value("restarts", 0);
    r.output = j.value("output", std::string());
    r.time_limit_ms = j.value("time_limit_ms", int64_t{0});
    r.kill_after_ms = j.value("kill_after_ms", int64_t{30'000});
    r.dependency = j.value("dependency", std::string());
    r.held = j.value("held", false);
    ReadOptional(j, "begin_time", &r.begin_time);
    r.slot = j.value("slot", std::string());
    r.memory = j.value("memory_engine", std::string());
    // null (no array task) or absent (an older daemon) reads 0.
    for (auto [key, field] :
         {std::pair{"array_job_id", &r.array_job_id}, std::pair{"array_task_id", &r.array_task_id},
          std::pair{"array_task_count", &r.array_task_count},
          std::pair{"array_task_min", &r.array_task_min},
          std::pair{"array_task_max", &r.array_task_max},
          std::pair{"array_limit", &r.array_limit}}) {
      std::optional<int64_t> value;
      ReadOptional(j, key, &value);
      *field = value.value_or(0);
    }
    std::optional<int64_t> slurm_job;
    ReadOptional(j, "slurm_job_id", &slurm_job);
    r.slurm_job_id = slurm_job.value_or(0);
    std::optional<std::string> slurm_step;
    ReadOptional(j, "slurm_step", &slurm_step);
    r.slurm_step = slurm_step.value_or("");
    r.mail_user = j.value("mail_user", std::string());
    r.mail_type = j.value("mail_type", std::string());
  } catch (const std::exception& e) {
    return Status::Error(std::string("bad job in the daemon's reply: ") + e.what());
  }
  return r;
}

json RunToJson(const JobRun& run) {
  const JobRecord& r = run.job;
  auto optional = [](const auto& v) { return v ? json(*v) : json(nullptr); };
  return {{"id", r.id},
          {"name", r.name},
          {"state", JobStateName(r.state)},
          {"reason", r.reason},
          {"priority", r.priority},
          {"uid", r.uid},
          {"gpu", r.gpu},
          {"gpus", r.gpus},
          {"slot", r.slot},
          {"kind", JobKindName(r.kind)},
          {"submit_time", r.submit_time},
          {"start_time", optional(r.start_time)},
          {"end_time", optional(r.end_time)},
          {"exit_code", optional(r.exit_code)},
          {"signal", optional(r.signal)},
          {"lease_seconds", r.lease_seconds},
          {"wait_seconds", r.wait_seconds},
          {"peak_bytes", r.peak_bytes},
          {"swaps_out", r.swaps_out},
          {"swaps_in", r.swaps_in},
          {"restarts", r.restarts},
          {"requeued", run.requeued},
          {"array_job_id", r.array_job_id},
          {"array_task_id", r.array_task_id}};
}

Result<JobRun> RunFromJson(const json& j) {
  Result<JobRecord> r = JobFromJson(j);
  if (!r.ok()) return r.status();
  JobRun run{std::move(r.value()), false};
  try {
    run.requeued = j.value("requeued", false);
  } catch (const std::exception& e) {
    return Status::Error(std::string("bad run in the daemon's reply: ") + e.what());
  }
  return run;
}

}  // namespace gshare
