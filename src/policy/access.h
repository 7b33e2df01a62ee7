// Who may do what (docs/design.md "Who may do what"): any user sees the queue; a job's
// details (command, cwd, output path) and its control (cancel, hold, release, requeue,
// suspend, resume, signal, priority) belong to its owner and the admins; stopping the daemon
// and switching the scheduler to the admins; priorities above a user's ceiling to no one but
// the admins. Admins: root, the uid a user's own daemon runs as, and [system] admin_group's
// members. As Slurm's PrivateData and AdminLevel divide squeue's view and scontrol's rights.
// Pure: callers resolve names and groups. Any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace gshare {

// The rules, resolved from the config by the daemon.
struct AccessRules {
  uint32_t daemon_uid = 0;                // the daemon's own uid: an admin of it
  std::optional<uint32_t> admin_gid;      // [system] admin_group
  int max_priority = 0;                   // ceiling of users no entry below names
  std::map<uint32_t, int> user_ceiling;   // [system.priority_ceiling] "user"
  std::map<uint32_t, int> group_ceiling;  // [system.priority_ceiling] "@group"
};

// The peer of a request, as the kernel reports it (SO_PEERCRED) with its groups.
struct Requester {
  uint32_t uid = 0;
  std::vector<uint32_t> gids;  // primary and supplementary
};

bool IsAdmin(const AccessRules& rules, const Requester& who);
// Whether `who` may see the details of, and steer, a job of `owner`.
bool MaySteer(const AccessRules& rules, const Requester& who, uint32_t owner);
// The highest priority `who` may give a job (admins: any).
int PriorityCeiling(const AccessRules& rules, const Requester& who);
// Error (starting kPermissionDenied) when `priority` is above `who`'s ceiling.
Status CheckPriority(const AccessRules& rules, const Requester& who, int priority);

// How every refusal of these rules begins; the CLI exits kExitDenied (5) on it.
inline constexpr const char* kPermissionDenied = "permission denied: ";

}  // namespace gshare
