#include "policy/access.h"

#include <algorithm>

#include "base/config.h"

namespace gshare {

bool IsAdmin(const AccessRules& rules, const Requester& who) {
  if (who.uid == 0 || who.uid == rules.daemon_uid) return true;
  return rules.admin_gid &&
         std::find(who.gids.begin(), who.gids.end(), *rules.admin_gid) != who.gids.end();
}

bool MaySteer(const AccessRules& rules, const Requester& who, uint32_t owner) {
  return who.uid == owner || IsAdmin(rules, who);
}

int PriorityCeiling(const AccessRules& rules, const Requester& who) {
  if (IsAdmin(rules, who)) return kMaxPriority;
  std::optional<int> named;
  auto raise = [&named](int c) { named = named ? std::max(*named, c) : c; };
  if (auto it = rules.user_ceiling.find(who.uid); it != rules.user_ceiling.end()) raise(it->second);
  for (uint32_t gid : who.gids) {
    if (auto it = rules.group_ceiling.find(gid); it != rules.group_ceiling.end()) raise(it->second);
  }
  return named.value_or(rules.max_priority);
}

Status CheckPriority(const AccessRules& rules, const Requester& who, int priority) {
  const int ceiling = PriorityCeiling(rules, who);
  if (priority <= ceiling) return Status::Ok();
  return Status::Error(std::string(kPermissionDenied) + "priority " + std::to_string(priority) +
                       " is above your ceiling of " + std::to_string(ceiling) +
                       " ([system] max_priority, [system.priority_ceiling])");
}

}  // namespace gshare
