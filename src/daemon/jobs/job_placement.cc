#include "daemon/jobs/job_placement.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <utility>

namespace gshare {

std::map<std::string, int> JobPlacement::RunningPerSlot() const {
  std::map<std::string, int> running;
  for (const auto& [id, job] : table_.jobs) {
    if (job->ended || job->adhoc) continue;
    for (const std::string& slot : SplitGpuList(job->record.slot)) ++running[slot];
  }
  return running;
}

std::map<int64_t, int> JobPlacement::RunningPerArray() const {
  // The jobs RunningPerSlot counts, by array.
  std::map<int64_t, int> running;
  for (const auto& [id, job] : table_.jobs) {
    if (!job->ended && !job->adhoc && job->record.IsArrayTask()) {
      ++running[job->record.array_job_id];
    }
  }
  return running;
}

std::map<uid_t, int> JobPlacement::RunningPerUser() const {
  // The same jobs as RunningPerSlot: preloaded processes outside gshare do not count.
  std::map<uid_t, int> running;
  for (const auto& [id, job] : table_.jobs) {
    if (!job->ended && !job->adhoc) ++running[job->record.uid];
  }
  return running;
}

std::map<std::string, uint64_t> JobPlacement::AllocatedPerSlot() const {
  std::map<std::string, uint64_t> bytes;
  const int gpu_count = options_.gpu_count();
  if (gpu_count <= 1) return bytes;
  for (int i = 0; i < gpu_count; ++i) {
    const std::string slot = std::to_string(i);
    const GpuKey gpu = options_.gpu_uuid_of(slot);
    if (gpu.empty()) continue;
    for (const auto& [id, job] : table_.jobs) {
      if (!job->ended) bytes[slot] += ledger_.Totals(static_cast<JobId>(id), gpu).allocated;
    }
  }
  return bytes;
}

std::string JobPlacement::VisibleDevicesOf(const std::string& gpu, const std::string& slot) const {
  if (gpu.empty() && options_.gpu_count() <= 1) return "";
  return VisibleDevices(slot.empty() ? gpu : slot);
}

LaunchEnv JobPlacement::LaunchEnvOf(const JobRecord& record, const std::string& slot) const {
  if (!options_.mps_env) return {};
  // The MPS server of its one GPU: the slot placed, else the GPU named, else the only one.
  return options_.mps_env(record, slot.empty() ? record.gpu : slot);
}

void JobPlacement::SetGang(const JobRecord& record) {
  if (record.gpus < 2) return;
  std::vector<GpuKey> keys;
  for (const std::string& entry : SplitGpuList(record.slot)) {
    std::string uuid = options_.gpu_uuid_of(entry);
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

std::vector<int64_t> JobPlacement::ExpandArrayIds(const std::vector<int64_t>& ids,
                                                  const std::map<int64_t, JobRecord>& pending,
                                                  bool on_pending, bool on_active) const {
  std::map<int64_t, std::vector<int64_t>> tasks;  // the wanted tasks by array job id
  for (const auto& [id, r] : pending) {
    if (on_pending && r.IsArrayTask()) tasks[r.array_job_id].push_back(id);
  }
  for (const auto& [id, job] : table_.jobs) {
    if (on_active && !job->ended && job->record.IsArrayTask()) {
      tasks[job->record.array_job_id].push_back(id);
    }
  }
  std::vector<int64_t> out;
  std::set<int64_t> seen;
  for (int64_t id : ids) {
    auto array = tasks.find(id);
    if (array == tasks.end()) {
      if (seen.insert(id).second) out.push_back(id);
      continue;
    }
    std::sort(array->second.begin(), array->second.end());
    for (int64_t task : array->second) {
      if (seen.insert(task).second) out.push_back(task);
    }
  }
  return out;
}

}  // namespace gshare
