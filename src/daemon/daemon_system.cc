// What the system daemon (`gshare daemon --system`) does differently from a user's own:
// whom it accepts, where each user's job files live, whom a job's supervisor runs as, and
// jobs read through the socket by users who cannot open the database. The daemon's thread.
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

std::string Daemon::JobFilesDir(uint32_t uid) const {
  return options_.system ? UserJobDir(options_.state_dir, uid) : options_.state_dir;
}

Result<JobIdentity> Daemon::SupervisorIdentity(const JobRecord& r) {
  // A user's own daemon runs its jobs as itself. The system daemon runs as root (the CLI
  // refuses --system to anyone else) and gives each job its owner's identity.
  if (!options_.system) return JobIdentity::Keep();
  Result<JobIdentity> who =
      r.uid == getuid() ? Result<JobIdentity>(JobIdentity::Keep()) : JobIdentity::Lookup(r.uid);
  if (!who.ok()) return who.status();
  const gid_t gid = who->changes() ? who->gid() : getgid();
  if (Status s = PrepareUserJobDir(options_.state_dir, r.uid, gid); !s.ok()) return s;
  return who;
}

}  // namespace gshare
