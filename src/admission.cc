#include "admission.h"

#include <algorithm>

namespace gshare {

std::string ChooseSlot(const std::string& gpu, const std::map<std::string, int>& running,
                       int gpu_count) {
  if (!gpu.empty()) return gpu;
  std::string best = "0";
  int best_count = -1;
  for (int i = 0; i < std::max(1, gpu_count); ++i) {
    std::string slot = std::to_string(i);
    auto it = running.find(slot);
    int count = it == running.end() ? 0 : it->second;
    if (best_count < 0 || count < best_count) {
      best = slot;
      best_count = count;
    }
  }
  return best;
}

AdmissionResult Admit(std::vector<AdmissionJob> pending, std::map<std::string, int> running,
                      const AdmissionLimits& limits, double now) {
  std::sort(pending.begin(), pending.end(), [](const AdmissionJob& a, const AdmissionJob& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.submit_time != b.submit_time) return a.submit_time < b.submit_time;
    return a.id < b.id;
  });
  const int max_running = std::max(1, limits.max_running);
  AdmissionResult result;
  bool someone_blocked = false;
  for (const AdmissionJob& job : pending) {
    if (job.begin_time && *job.begin_time > now) {
      result.next_begin = std::min(result.next_begin.value_or(*job.begin_time), *job.begin_time);
    }
    if (job.held) {
      result.reasons[job.id] = kReasonHeld;
    } else if (job.begin_time && *job.begin_time > now) {
      result.reasons[job.id] = kReasonBeginTime;
    } else if (job.dependencies == DependencyState::kNever) {
      result.reasons[job.id] = kReasonDependencyNever;
    } else if (job.dependencies == DependencyState::kWaiting) {
      result.reasons[job.id] = kReasonDependency;
    } else {
      std::string slot = ChooseSlot(job.gpu, running, limits.gpu_count);
      if (job.foreground || running[slot] < max_running) {
        ++running[slot];
        result.start.push_back({job.id, slot});
      } else {
        result.reasons[job.id] = someone_blocked ? kReasonPriority : kReasonResources;
        someone_blocked = true;
      }
    }
  }
  return result;
}

}  // namespace gshare
