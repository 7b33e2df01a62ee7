#include "daemon/gpu/gpu_gate.h"

#include <strings.h>

namespace gshare {

Status GpuGate::MayAdd(const GpuKey& gpu, uid_t uid, bool admin) const {
  if (admin) return Status::Ok();
  const std::optional<std::vector<std::string>>& listed = options_.inventory();
  if (listed) {
    for (const std::string& uuid : *listed) {
      if (strcasecmp(uuid.c_str(), gpu.c_str()) == 0) return Status::Ok();
    }
    return Status::Error("it names a GPU this machine does not have (" + gpu + ")");
  }
  // Unverifiable: each user may bring in as many GPUs as the machine has.
  auto it = added_.find(uid);
  const int count = options_.gpu_count();
  if (it == added_.end() || it->second < count) return Status::Ok();
  return Status::Error("it names more new GPUs (" + gpu + ") than this machine has (" +
                       std::to_string(count) + ")");
}

}  // namespace gshare
