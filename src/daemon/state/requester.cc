#include "daemon/state/requester.h"

#include "base/user_name.h"
#include "runner/job_identity.h"

namespace gshare {
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
  if (!config.admin_group.empty()) {
    rules.admin_gid = GroupIdOfName(config.admin_group);
    if (!rules.admin_gid) {
      return Status::Error("[system] admin_group: no group \"" + config.admin_group + "\"");
    }
  }
  for (const auto& [who, ceiling] : config.priority_ceiling) {
    if (who[0] == '@') {
      std::optional<uint32_t> gid = GroupIdOfName(who.substr(1));
      if (!gid)
        return Status::Error("[system.priority_ceiling]: no group \"" + who.substr(1) + "\"");
      rules.group_ceiling[*gid] = ceiling;
    } else {
      std::optional<uint32_t> uid = UserIdOfName(who);
      if (!uid) return Status::Error("[system.priority_ceiling]: no user \"" + who + "\"");
      rules.user_ceiling[*uid] = ceiling;
    }
  }
  return rules;
}

}  // namespace gshare
