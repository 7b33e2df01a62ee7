// A peer's identity for authorization (policy/access.h): its uid from SO_PEERCRED and the
// groups the group database gives that user (getgrouplist(3)), and the config's names
// resolved to ids. The daemon's thread; they read /etc/passwd and /etc/group (or NSS).
#pragma once

#include <sys/types.h>

#include "base/config.h"
#include "base/status.h"
#include "policy/access.h"

namespace gshare {

// `uid` with its primary and supplementary groups; a uid the user database does not know has
// no groups.
Requester RequesterOf(uid_t uid);

// The access rules of a daemon running as `daemon_uid`. A user's own daemon (`system` false)
// has no ceiling: only its owner and root reach it. Error naming the entry when
// [system] admin_group or a [system.priority_ceiling] name is unknown.
Result<AccessRules> ResolveAccessRules(const Config::System& config, bool system, uid_t daemon_uid);

}  // namespace gshare
