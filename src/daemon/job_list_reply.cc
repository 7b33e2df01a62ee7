#include "daemon/job_list_reply.h"

#include <spdlog/spdlog.h>

#include "ipc/job_json.h"
#include "ipc/replies.h"

namespace gshare {

using json = nlohmann::json;

std::string ListJobsReply(JobStore& store, const ListJobsRequest& request,
                          const std::function<void(json*)>& hide) {
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
