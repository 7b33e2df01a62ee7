// Reading jobs through the daemon (protocol.h kListJobs): what a client of the system daemon
// does instead of opening its database, which users cannot read. The request as a typed
// struct (ToJson on the client's side, Parse on the daemon's, as requests.h) and a job's JSON
// (job_json.h JobToJson) read back into a JobRecord. Any thread; Parse and JobFromJson never
// throw.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "base/status.h"
#include "store/job_store.h"

namespace gshare {

// kListJobs: {"job_id"} for one job (its row or none), else {"states":[names], "name", "uid",
// "order": "queue"|"newest", "limit"} as store/job_store.h ListFilter.
// Reply: {"ok": true, "jobs": [JobToJson...]}.
struct ListJobsRequest {
  std::optional<int64_t> job_id;
  ListFilter filter;
  nlohmann::json ToJson() const;
  static Result<ListJobsRequest> Parse(const nlohmann::json& j);
};

// A job as JobToJson wrote it. Missing fields keep JobRecord's defaults; a wrong type or an
// unknown state is an error naming the field.
Result<JobRecord> JobFromJson(const nlohmann::json& j);

}  // namespace gshare
