// The daemon on a machine of several GPUs: which GPUs a placed job sees and the gang lease of a
// job that uses several at once (moves are the checkpoint engine's: checkpoint_moves.cc).
#include <spdlog/spdlog.h>

#include <algorithm>

#include "base/gpu_inventory.h"
#include "daemon/daemon.h"

namespace gshare {

std::string Daemon::VisibleDevicesOf(const std::string& gpu, const std::string& slot) const {
  if (gpu.empty() && gpu_count_ <= 1) return "";
  return VisibleDevices(slot.empty() ? gpu : slot);
}

std::map<std::string, uint64_t> Daemon::AllocatedPerSlot() const {
  std::map<std::string, uint64_t> bytes;
  if (gpu_count_ <= 1) return bytes;
  for (int i = 0; i < gpu_count_; ++i) {
    const std::string slot = std::to_string(i);
    const GpuKey gpu = GpuUuidOf(slot);
    if (gpu.empty()) continue;
    for (const auto& [id, job] : table_.jobs) {
      if (!job->ended) bytes[slot] += ledger_.Totals(static_cast<JobId>(id), gpu).allocated;
    }
  }
  return bytes;
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
