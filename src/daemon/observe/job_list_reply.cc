#include "daemon/observe/job_list_reply.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "ipc/job_json.h"
#include "ipc/replies.h"

namespace gshare {

using json = nlohmann::json;

std::string ListJobsReply(JobStore& store, const ListJobsRequest& request,
                          const std::function<void(json*)>& hide) {
  if (request.runs) {
    // Pages of at most kRunsPage job rows keep the reply far below the client's frame limit.
    constexpr int kRunsPage = 20'000;
    RunFilter filter = *request.runs;
    filter.max_rows = filter.max_rows > 0 ? std::min(filter.max_rows, kRunsPage) : kRunsPage;
    json runs = json::array();
    int64_t next_after = 0;
    Status st = store.ForEachRun(
        filter,
        [&](const JobRun& run) {
          runs.push_back(RunToJson(run));
          hide(&runs.back());
        },
        &next_after);
    if (!st.ok()) return ErrorReply(st.message());
    return ToJsonText(json{{"ok", true},
                           {"runs", std::move(runs)},
                           {"next_after", next_after != 0 ? json(next_after) : json(nullptr)}});
  }
  json jobs = json::array();
  if (request.job_id) {
    Result<std::optional<JobRecord>> row = store.Get(*request.job_id);
    if (!row.ok()) return ErrorReply(row.status().message());
    if (row.value()) jobs.push_back(JobToJson(*row.value()));
  } else {
    std::vector<std::pair<int64_t, std::string>> bad_rows;
    Result<std::vector<JobRecord>> rows = store.List(request.filter, &bad_rows);
    if (!rows.ok()) return ErrorReply(rows.status().message());
    for (const auto& [id, error] : bad_rows) {
      spdlog::warn("job {}: its record cannot be read ({}); not listed", id, error);
    }
    for (const JobRecord& r : rows.value()) jobs.push_back(JobToJson(r));
  }
  for (json& job : jobs) hide(&job);
  return ToJsonText(json{{"ok", true}, {"jobs", std::move(jobs)}});
}

}  // namespace gshare
