#include "policy/admission.h"

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

AdmissionResult Admit(const std::vector<AdmissionJob>& pending, std::map<std::string, int> running,
                      const AdmissionLimits& limits, double now) {
  std::vector<size_t> order(pending.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&pending](size_t x, size_t y) {
    const AdmissionJob& a = pending[x];
    const AdmissionJob& b = pending[y];
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.submit_time != b.submit_time) return a.submit_time < b.submit_time;
    return a.id < b.id;
  });
  const int max_running = std::max(1, limits.max_running);
  AdmissionResult result;
  result.reasons.assign(pending.size(), nullptr);
  bool someone_blocked = false;
  // Once every slot is full, an eligible job without --gpu cannot start: no need to choose.
  bool all_full = false;
  for (size_t index : order) {
    const AdmissionJob& job = pending[index];
    const char*& reason = result.reasons[index];
    if (job.begin_time && *job.begin_time > now) {
      result.next_begin = std::min(result.next_begin.value_or(*job.begin_time), *job.begin_time);
    }
    if (job.held) {
      reason = kReasonHeld;
    } else if (job.begin_time && *job.begin_time > now) {
      reason = kReasonBeginTime;
    } else if (job.dependencies == DependencyState::kNever) {
      reason = kReasonDependencyNever;
    } else if (job.dependencies == DependencyState::kWaiting) {
      reason = kReasonDependency;
    } else if (all_full && job.gpu.empty() && !job.foreground) {
      reason = kReasonPriority;  // someone_blocked already holds
    } else {
      std::string slot = ChooseSlot(job.gpu, running, limits.gpu_count);
      int& count = running[slot];
      if (job.foreground || count < max_running) {
        ++count;
        result.start.push_back({index, std::move(slot)});
      } else {
        reason = someone_blocked ? kReasonPriority : kReasonResources;
        someone_blocked = true;
        if (job.gpu.empty()) all_full = true;  // the least loaded slot is full
      }
    }
  }
  return result;
}

}  // namespace gshare
