// Job arrays in the daemon (docs/cli.md "Job arrays"): a submission of many tasks (the count of
// each array's running tasks and an array's job id standing for its tasks: JobPlacement).
#include <spdlog/spdlog.h>

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

}  // namespace gshare
