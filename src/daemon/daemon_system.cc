// What the system daemon (`gshare daemon --system`) does differently from a user's own: whom it
// accepts, and jobs read through the socket by users who cannot open the database (where each
// user's job files live and whom a job's supervisor runs as: job_processes.h). The daemon's
// thread.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "daemon/job_list_reply.h"
#include "daemon/system_dirs.h"
#include "ipc/job_json.h"
#include "ipc/job_list.h"
#include "ipc/replies.h"

namespace gshare {

bool Daemon::AcceptsUid(uid_t uid) const {
  // The system daemon serves everyone the socket's mode lets in; who may do what to whose
  // job is decided per request. A user's own daemon serves that user (and root).
  return options_.system || uid == getuid() || uid == 0;
}

void Daemon::OnListJobs(Connection& c, const nlohmann::json& req) {
  Result<ListJobsRequest> parsed = ListJobsRequest::Parse(req);
  if (!parsed.ok()) return Reply(c, ErrorReply(parsed.status().message()));
  Reply(c, ListJobsReply(*store_, parsed.value(),
                         [&](nlohmann::json* job) { access_.HideDetails(c, job); }));
}

}  // namespace gshare
