// Who a submitted job's supervisor, and so the job, runs as (issue 21 item 4): the owner's uid,
// gid and supplementary groups when a root daemon starts another user's job. The lookup (the
// password and group databases, NSS) happens before fork, in the daemon's thread; Become() runs
// in the child between fork and exec and is async-signal-safe. Errors are one line.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "base/status.h"

namespace gshare {

class JobIdentity {
 public:
  // No change of identity: the child keeps the daemon's (a per-user daemon's jobs are its
  // user's; a root-owned job of the system daemon runs as root).
  static JobIdentity Keep();
  // User `uid` as the password database has them: their primary gid and every group
  // getgrouplist(3) gives (initgroups' list). Error "no user with uid N in the password
  // database" for a deleted user, or the lookup's own error.
  static Result<JobIdentity> Lookup(uid_t uid);

  bool changes() const { return changes_; }
  uid_t uid() const { return uid_; }
  gid_t gid() const { return gid_; }
  const std::vector<gid_t>& groups() const { return groups_; }
  const std::string& name() const { return name_; }

  // In the child after fork: setgroups, setgid, setuid (in that order: root is needed for all
  // three), then checks that real and effective ids are the user's and that setuid(0) now
  // fails, so root cannot be regained. Returns 0, or the errno of the failed step (EPERM when
  // root could be regained). No allocation, no lock: async-signal-safe. Does nothing (0)
  // when !changes().
  int Become() const noexcept;

 private:
  bool changes_ = false;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  std::vector<gid_t> groups_;
  std::string name_;
};

}  // namespace gshare
