#include "ipc/job_list.h"

#include <exception>

#include "model/job_fields.h"

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

// One member from its JSON value (not null), by the member's type; false for a value no gshare
// sends (an unknown state). A wrong JSON type throws (nlohmann::json::get), caught below.
template <typename T>
bool FieldFromJson(const json& v, T* out) {
  *out = v.get<T>();
  return true;
}
template <typename T>
bool FieldFromJson(const json& v, std::optional<T>* out) {
  *out = v.get<T>();
  return true;
}
bool FieldFromJson(const json& v, JobState* out) {
  std::optional<JobState> state = JobStateFromName(v.get<std::string>());
  if (state) *out = *state;
  return state.has_value();
}
// A memory engine by name; "" or a name a newer daemon sends: the config's.
bool FieldFromJson(const json& v, std::optional<MemoryEngine>* out) {
  *out = ParseMemoryEngine(v.get<std::string>());
  return true;
}
// A kind a newer daemon sends reads as a submitted job's.
bool FieldFromJson(const json& v, JobKind* out) {
  *out = ParseJobKind(v.get<std::string>()).value_or(JobKind::kSubmit);
  return true;
}

}  // namespace

Result<JobRecord> JobFromJson(const json& j) {
  JobRecord r;
  try {
    r.id = j.at("id").get<int64_t>();
    if (!j.contains("state") || j.at("state").is_null()) {
      return Status::Error("job " + std::to_string(r.id) + ": no state");
    }
    // Absent (an older daemon) or null (a rule's "not carried") keeps JobRecord's default.
#define GS_FROM_JSON(member, column, key, shown, in_runs)                       \
  if (JobFieldShown::shown != JobFieldShown::kNever) {                          \
    auto it = j.find(key);                                                      \
    if (it != j.end() && !it->is_null() && !FieldFromJson(*it, &r.member)) {    \
      return Status::Error("job " + std::to_string(r.id) + ": unknown " + key); \
    }                                                                           \
  }
    GS_JOB_FIELDS(GS_FROM_JSON)
#undef GS_FROM_JSON
  } catch (const std::exception& e) {
    return Status::Error(std::string("bad job in the daemon's reply: ") + e.what());
  }
  return r;
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
