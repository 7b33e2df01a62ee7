#include "daemon/requester.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <vector>

#include "runner/job_identity.h"

namespace gshare {
namespace {

// getgrnam_r / getpwnam_r with a buffer that grows until it fits.
template <typename Entry, typename Key, typename Fn>
bool Lookup(Fn fn, Key key, Entry* entry, std::vector<char>* buf) {
  buf->resize(1024);
  for (;;) {
    Entry* found = nullptr;
    int err = fn(key, entry, buf->data(), buf->size(), &found);
    if (err == ERANGE && buf->size() < (1u << 20)) {
      buf->resize(buf->size() * 2);
      continue;
    }
    return err == 0 && found != nullptr;
  }
}

}  // namespace

Requester RequesterOf(uid_t uid) {
  Requester who;
  who.uid = uid;
  // The same lookup as the job's own identity (its supervisor's groups).
  Result<JobIdentity> id = JobIdentity::Lookup(uid);
  if (id.ok()) who.gids.assign(id->groups().begin(), id->groups().end());
  return who;
}

Result<AccessRules> ResolveAccessRules(const Config::System& config, bool system,
                                       uid_t daemon_uid) {
  AccessRules rules;
  rules.daemon_uid = daemon_uid;
  rules.max_priority = system ? config.max_priority : kMaxPriority;
  if (!system) return rules;
  std::vector<char> buf;
  if (!config.admin_group.empty()) {
    group gr{};
    if (!Lookup(getgrnam_r, config.admin_group.c_str(), &gr, &buf)) {
      return Status::Error("[system] admin_group: no group \"" + config.admin_group + "\"");
    }
    rules.admin_gid = gr.gr_gid;
  }
  for (const auto& [who, ceiling] : config.priority_ceiling) {
    if (who[0] == '@') {
      group gr{};
      if (!Lookup(getgrnam_r, who.c_str() + 1, &gr, &buf)) {
        return Status::Error("[system.priority_ceiling]: no group \"" + who.substr(1) + "\"");
      }
      rules.group_ceiling[gr.gr_gid] = ceiling;
    } else {
      passwd pw{};
      if (!Lookup(getpwnam_r, who.c_str(), &pw, &buf)) {
        return Status::Error("[system.priority_ceiling]: no user \"" + who + "\"");
      }
      rules.user_ceiling[pw.pw_uid] = ceiling;
    }
  }
  return rules;
}

}  // namespace gshare
