#include "runner/job_identity.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cstring>

namespace gshare {

JobIdentity JobIdentity::Keep() { return JobIdentity(); }

Result<JobIdentity> JobIdentity::Lookup(uid_t uid) {
  struct passwd pw;
  struct passwd* found = nullptr;
  std::vector<char> buf(16384);
  int err;
  while ((err = getpwuid_r(uid, &pw, buf.data(), buf.size(), &found)) == ERANGE &&
         buf.size() < (1u << 20)) {
    buf.resize(buf.size() * 2);
  }
  if (err != 0) {
    return Status::Error("cannot look up uid " + std::to_string(uid) + ": " + std::strerror(err));
  }
  if (found == nullptr) {
    return Status::Error("no user with uid " + std::to_string(uid) + " in the password database");
  }
  JobIdentity id;
  id.changes_ = true;
  id.uid_ = uid;
  id.gid_ = pw.pw_gid;
  id.name_ = pw.pw_name;
  // getgrouplist says how many groups there are when the array is too small.
  int count = 32;
  for (int tries = 0; tries < 8; ++tries) {
    id.groups_.resize(static_cast<size_t>(count));
    int n = count;
    if (getgrouplist(pw.pw_name, pw.pw_gid, id.groups_.data(), &n) >= 0) {
      id.groups_.resize(static_cast<size_t>(n));
      return id;
    }
    count = n > count ? n : count * 2;
  }
  return Status::Error("cannot list the groups of " + id.name_);
}

int JobIdentity::Become() const noexcept {
  if (!changes_) return 0;
  if (setgroups(groups_.size(), groups_.data()) != 0) return errno;
  if (setgid(gid_) != 0) return errno;
  if (setuid(uid_) != 0) return errno;
  if (getuid() != uid_ || geteuid() != uid_ || getgid() != gid_ || getegid() != gid_) return EPERM;
  // A user other than root must not be able to come back (saved set-user-ID included).
  if (uid_ != 0 && setuid(0) == 0) return EPERM;
  return 0;
}

}  // namespace gshare
