// The daemon on a machine of several GPUs: which GPUs a placed job sees, and the gang lease of
// a job that uses several at once; see daemon.h.
#include <spdlog/spdlog.h>

#include "base/gpu_inventory.h"
#include "daemon/daemon.h"

namespace gshare {

std::string Daemon::VisibleDevicesOf(const std::string& gpu, const std::string& slot) const {
  if (gpu.empty() && gpu_count_ <= 1) return "";
  return VisibleDevices(slot.empty() ? gpu : slot);
}

void Daemon::SetGang(const JobRecord& record) {
  if (record.gpus < 2) return;
  std::vector<GpuKey> keys;
  for (const std::string& entry : SplitGpuList(record.slot)) {
    std::string uuid = GpuUuidOf(entry);
    if (uuid.empty()) {
      spdlog::warn("job {}: GPU {} has no UUID from NVML; its {} GPUs are leased one by one",
                   record.id, entry, record.gpus);
      return;
    }
    keys.push_back(std::move(uuid));
  }
  spdlog::info("job {}: gang lease on GPUs {}", record.id, record.slot);
  arbiter_.SetGang(static_cast<JobId>(record.id), std::move(keys));
}

}  // namespace gshare
