// AccessGuard: the daemon's side of who may do what (policy/access.h; docs/design.md "Who may
// do what"): it attributes a request to its connection's SO_PEERCRED uid (its groups looked
// up once per connection, never taken from a payload), and answers for a job id through the
// owner lookup it is given. Not thread-safe: the daemon's event loop is its only caller.
// Refusals are Status errors beginning kPermissionDenied, logged as warnings.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/status.h"
#include "daemon/state/connection.h"
#include "policy/access.h"

namespace gshare {

class AccessGuard {
 public:
  // The owner (uid) of job `id`, pending, active or stored; nullopt when there is no such job.
  using OwnerLookup = std::function<std::optional<uint32_t>(int64_t id)>;
  // `groups_of`: a uid's groups (RequesterOf, from the system's group database).
  using GroupLookup = std::function<Requester(uint32_t uid)>;
  AccessGuard(OwnerLookup owner_of, GroupLookup groups_of);

  void SetRules(AccessRules rules) { rules_ = std::move(rules); }
  const AccessRules& rules() const { return rules_; }

  // The requester of connection `c`, its groups looked up at its first request.
  const Requester& Who(Connection& c);
  bool IsAdmin(Connection& c) { return gshare::IsAdmin(rules_, Who(c)); }
  // Ok when `c` may steer job `id` with `action` (its owner or an admin), and for a job that
  // does not exist (the action's own error says so); else kPermissionDenied naming the owner.
  Status MayControl(Connection& c, int64_t id, const std::string& action);
  // Whether `c` proves it belongs to a job of `owner` whose token is `job_token`: it is the
  // owner's or root's and shows that token (`shown`, hex; compared in constant time). An admin
  // is not enough: a process's membership of a job is a fact, not a decision. Logs nothing.
  static bool ProvesJob(const Connection& c, uint32_t owner, const std::string& job_token,
                        const std::string& shown);
  // Ok when `c` may speak for the runner of that job on a connection of its own (a run's end
  // reported after a daemon restart): ProvesJob. Else kPermissionDenied, logged.
  Status MayRun(const Connection& c, uint32_t owner, const std::string& job_token,
                const std::string& shown, int64_t id);
  // Error (kPermissionDenied) when `priority` is above `c`'s ceiling.
  Status CheckPriority(Connection& c, int priority) {
    return gshare::CheckPriority(rules_, Who(c), priority);
  }
  // Empties what only the owner and admins may see (argv, cwd, output, dependency) in job JSON
  // (ipc/job_json.h) of a job `c` may not steer, and marks it "hidden".
  void HideDetails(Connection& c, nlohmann::json* job);

 private:
  OwnerLookup owner_of_;
  GroupLookup groups_of_;
  AccessRules rules_;
};

}  // namespace gshare
