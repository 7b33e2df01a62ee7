// Authorization in the daemon (policy/access.h; docs/design.md "Who may do what"): requests
// are attributed to the peer's SO_PEERCRED uid, never to a field of the payload.
#include <spdlog/spdlog.h>

#include "base/user_name.h"
#include "daemon/daemon.h"

namespace gshare {

const Requester& Daemon::Who(Connection& c) {
  if (!c.requester) c.requester = RequesterOf(c.uid);
  return *c.requester;
}

std::optional<uint32_t> Daemon::OwnerOf(int64_t id) {
  if (const JobRecord* pending = queue_->Pending(id)) return pending->uid;
  if (auto active = jobs_.find(id); active != jobs_.end()) return active->second->record.uid;
  auto row = store_->Get(id);
  if (!row.ok() || !row.value()) return std::nullopt;
  return row.value()->uid;
}

Status Daemon::MayControl(Connection& c, int64_t id, const std::string& action) {
  std::optional<uint32_t> owner = OwnerOf(id);
  if (!owner || MaySteer(access_, Who(c), *owner)) return Status::Ok();
  spdlog::warn("uid {} may not {} {} of uid {}", c.uid, action, JobName(id), *owner);
  return Status::Error(std::string(kPermissionDenied) + JobName(id) + " belongs to " +
                       UserName(*owner) + ": only its owner or an admin may " + action + " it");
}

void Daemon::HideDetails(Connection& c, nlohmann::json* job) {
  auto uid = job->find("uid");
  if (uid == job->end() || !uid->is_number_integer()) return;
  if (MaySteer(access_, Who(c), uid->get<uint32_t>())) return;
  // Emptied, not removed: clients read every field with its type.
  if (job->contains("argv")) (*job)["argv"] = nlohmann::json::array();
  for (const char* key : {"cwd", "output", "dependency"}) {
    if (job->contains(key)) (*job)[key] = "";
  }
  (*job)["hidden"] = true;
}

}  // namespace gshare
