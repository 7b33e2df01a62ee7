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
#include "ipc/job_json.h"
#include "model/job_filters.h"
#include "model/job_record.h"

namespace gshare {

// kListJobs: {"job_id"} for one job (its row or none), else {"states":[names], "name", "uid",
// "order": "queue"|"newest", "limit"} as store/job_store.h ListFilter.
// Reply: {"ok": true, "jobs": [JobToJson...]}.
// Or the runs of `gshare acct`: {"runs": {"since", "until", "states", "requeued", "uid",
// "after_id", "max_rows"}} as RunFilter; reply {"ok": true, "runs": [RunToJson...],
// "next_after": the after_id of the next page, or null after the last}.
struct ListJobsRequest {
  std::optional<int64_t> job_id;
  ListFilter filter;
  std::optional<RunFilter> runs;
  nlohmann::json ToJson() const;
  static Result<ListJobsRequest> Parse(const nlohmann::json& j);
};

// A run as RunToJson (job_json.h) wrote it; errors as JobFromJson's.
Result<JobRun> RunFromJson(const nlohmann::json& j);

// A job as JobToJson wrote it. Missing fields keep JobRecord's defaults; a wrong type or an
// unknown state is an error naming the field.
Result<JobRecord> JobFromJson(const nlohmann::json& j);

}  // namespace gshare
