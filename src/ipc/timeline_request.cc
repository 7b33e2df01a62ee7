#include "ipc/timeline_request.h"

#include <cstdint>
#include <limits>

#include "ipc/json_fields.h"

namespace gshare {

using json = nlohmann::json;

namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int64_t>::max();
// More job ids than anyone types; bounds what a request makes the daemon hold.
constexpr size_t kMaxJobs = 10'000;

}  // namespace

json TimelineRequest::ToJson() const {
  return json{{"since_us", since_us},
              {"until_us", until_us},
              {"all_users", all_users},
              {"jobs", jobs},
              {"after_id", after_id}};
}

Result<TimelineRequest> TimelineRequest::Parse(const json& j) {
  auto bad = [](const Status& st) {
    return Status::Error("bad timeline request: " + st.message());
  };
  if (!j.is_object()) return Status::Error("bad timeline request: not an object");
  TimelineRequest r;
  Result<int64_t> since = IntField(j, "since_us", 0, kMaxInt);
  if (!since.ok()) return bad(since.status());
  Result<int64_t> until = IntField(j, "until_us", 0, kMaxInt);
  if (!until.ok()) return bad(until.status());
  Result<int64_t> after = IntField(j, "after_id", 0, kMaxInt);
  if (!after.ok()) return bad(after.status());
  Result<bool> all = BoolField(j, "all_users");
  if (!all.ok()) return bad(all.status());
  r.since_us = since.value();
  r.until_us = until.value();
  r.after_id = after.value();
  r.all_users = all.value();
  const json jobs = j.value("jobs", json::array());
  if (!jobs.is_array() || jobs.size() > kMaxJobs) {
    return Status::Error("bad timeline request: \"jobs\" must be a list of at most " +
                         std::to_string(kMaxJobs) + " job ids");
  }
  for (const json& id : jobs) {
    std::optional<int64_t> v = AsInt64(id);
    if (!v || *v <= 0) return Status::Error("bad timeline request: bad job id " + id.dump());
    r.jobs.insert(*v);
  }
  return r;
}

json EventToJson(const TimelineEvent& e) {
  return json{{"id", e.id},   {"time_us", e.time_us}, {"kind", TimelineKindName(e.kind)},
              {"gpu", e.gpu}, {"job", e.job},         {"name", e.job_name},
              {"uid", e.uid}, {"pid", e.pid},         {"bytes", e.bytes},
              {"ms", e.ms},   {"detail", e.detail}};
}

Result<TimelineEvent> EventFromJson(const json& j) {
  if (!j.is_object()) return Status::Error("a timeline event is not an object");
  TimelineEvent e;
  try {
    std::optional<TimelineKind> kind = TimelineKindFromName(j.at("kind").get<std::string>());
    if (!kind) return Status::Error("unknown timeline event kind " + j.at("kind").dump());
    e.kind = *kind;
    e.id = j.at("id").get<int64_t>();
    e.time_us = j.at("time_us").get<int64_t>();
    e.gpu = j.at("gpu").get<std::string>();
    e.job = j.at("job").get<int64_t>();
    e.job_name = j.value("name", std::string());
    e.uid = j.at("uid").get<uint32_t>();
    e.pid = j.at("pid").get<int>();
    e.bytes = j.at("bytes").get<uint64_t>();
    e.ms = j.at("ms").get<double>();
    e.detail = j.at("detail").get<std::string>();
  } catch (const std::exception& ex) {
    return Status::Error(std::string("bad timeline event: ") + ex.what());
  }
  return e;
}

}  // namespace gshare
