// The owner of a job wherever it is (pending, active, stored): what AccessGuard asks
// (daemon/access_guard.h; docs/design.md "Who may do what").
#include "daemon/daemon.h"

namespace gshare {

std::optional<uint32_t> Daemon::OwnerOf(int64_t id) {
  if (const JobRecord* pending = queue_->Pending(id)) return pending->uid;
  if (auto active = table_.jobs.find(id); active != table_.jobs.end())
    return active->second->record.uid;
  auto row = store_->Get(id);
  if (!row.ok() || !row.value()) return std::nullopt;
  return row.value()->uid;
}

}  // namespace gshare
