// Job arrays in the daemon (docs/cli.md "Job arrays"): a submission of many tasks, the count
// of each array's running tasks for its "%N" limit, and an array's job id standing for its
// tasks in job control.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "base/array_spec.h"
#include "daemon/daemon.h"
#include "ipc/replies.h"

namespace gshare {

void Daemon::SubmitArray(Connection& c, JobRecord r, const JobPayload& payload,
                         const std::string& spec) {
  // The client checked it too; a request is hostile until read (docs/design.md §7).
  Result<ArraySpec> parsed = ParseArraySpec(spec);
  if (!parsed.ok()) {
    return Reply(c, ErrorReply("bad job options: --array: " + parsed.status().message()));
  }
  const std::vector<int64_t>& ids = parsed->task_ids;
  r.array_task_count = static_cast<int64_t>(ids.size());
  r.array_task_min = ids.front();
  r.array_task_max = ids.back();
  r.array_limit = parsed->limit;
  std::vector<JobRecord> tasks;
  tasks.reserve(ids.size());
  for (int64_t task : ids) {
    JobRecord& t = tasks.emplace_back(r);
    t.array_task_id = task;
    if (Status token = AssignToken(&t); !token.ok()) return Reply(c, ErrorReply(token.message()));
  }
  if (Status st = store_->InsertArray(&tasks, payload); !st.ok()) {
    return Reply(c, ErrorReply(st.message()));
  }
  const int64_t array_id = tasks.front().array_job_id;
  spdlog::debug("job array {} submitted: {} task(s) of {}", array_id, tasks.size(), r.name);
  for (JobRecord& t : tasks) queue_->Add(std::move(t));
  Reply(c, JobIdReply{array_id, true, false, ""}.ToJsonText());
}

std::map<int64_t, int> Daemon::RunningPerArray() const {
  // The jobs RunningPerSlot counts, by array.
  std::map<int64_t, int> running;
  for (const auto& [id, job] : table_.jobs) {
    if (!job->ended && !job->adhoc && job->record.IsArrayTask()) {
      ++running[job->record.array_job_id];
    }
  }
  return running;
}

std::vector<int64_t> Daemon::ExpandArrayIds(const std::vector<int64_t>& ids, bool pending,
                                            bool active) const {
  std::map<int64_t, std::vector<int64_t>> tasks;  // the wanted tasks by array job id
  for (const auto& [id, r] : queue_->pending()) {
    if (pending && r.IsArrayTask()) tasks[r.array_job_id].push_back(id);
  }
  for (const auto& [id, job] : table_.jobs) {
    if (active && !job->ended && job->record.IsArrayTask()) {
      tasks[job->record.array_job_id].push_back(id);
    }
  }
  std::vector<int64_t> out;
  std::set<int64_t> seen;
  for (int64_t id : ids) {
    auto array = tasks.find(id);
    if (array == tasks.end()) {
      if (seen.insert(id).second) out.push_back(id);
      continue;
    }
    std::sort(array->second.begin(), array->second.end());
    for (int64_t task : array->second) {
      if (seen.insert(task).second) out.push_back(task);
    }
  }
  return out;
}

}  // namespace gshare
