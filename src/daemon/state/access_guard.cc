#include "daemon/state/access_guard.h"

#include <spdlog/spdlog.h>

#include "base/job_token.h"
#include "base/user_name.h"

namespace gshare {

AccessGuard::AccessGuard(OwnerLookup owner_of, GroupLookup groups_of)
    : owner_of_(std::move(owner_of)), groups_of_(std::move(groups_of)) {}

const Requester& AccessGuard::Who(Connection& c) {
  if (!c.requester) c.requester = groups_of_(c.uid);
  return *c.requester;
}

Status AccessGuard::MayControl(Connection& c, int64_t id, const std::string& action) {
  std::optional<uint32_t> owner = owner_of_(id);
  if (!owner || MaySteer(rules_, Who(c), *owner)) return Status::Ok();
  spdlog::warn("uid {} may not {} job {} of uid {}", c.uid, action, id, *owner);
  return Status::Error(std::string(kPermissionDenied) + "job " + std::to_string(id) +
                       " belongs to " + UserName(*owner) + ": only its owner or an admin may " +
                       action + " it");
}

bool AccessGuard::ProvesJob(const Connection& c, uint32_t owner, const std::string& job_token,
                            const std::string& shown) {
  return (c.uid == owner || c.uid == 0) && JobTokensEqual(shown, job_token);  // false if empty
}

Status AccessGuard::MayRun(const Connection& c, uint32_t owner, const std::string& job_token,
                           const std::string& shown, int64_t id) {
  if (ProvesJob(c, owner, job_token, shown)) return Status::Ok();
  spdlog::warn("uid {} (pid {}) spoke for the runner of job {} of uid {} without its {}: refused",
               c.uid, c.pid, id, owner, c.uid == owner || c.uid == 0 ? "token" : "uid");
  return Status::Error(std::string(kPermissionDenied) + "only the runner of job " +
                       std::to_string(id) + " may report on it");
}

void AccessGuard::HideDetails(Connection& c, nlohmann::json* job) {
  auto uid = job->find("uid");
  if (uid == job->end() || !uid->is_number_integer()) return;
  if (MaySteer(rules_, Who(c), uid->get<uint32_t>())) return;
  // Emptied, not removed: clients read every field with its type.
  if (job->contains("argv")) (*job)["argv"] = nlohmann::json::array();
  for (const char* key : {"cwd", "output", "dependency"}) {
    if (job->contains(key)) (*job)[key] = "";
  }
  (*job)["hidden"] = true;
}

}  // namespace gshare
