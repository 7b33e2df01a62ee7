#include "policy/admission.h"

#include <algorithm>
#include <tuple>

#include "base/gpu_inventory.h"

namespace gshare {

std::vector<std::string> ChooseSlots(const std::string& gpu, int count,
                                     const std::map<std::string, int>& running, int gpu_count,
                                     const std::map<std::string, uint64_t>& allocated) {
  if (!gpu.empty()) return SplitGpuList(gpu);
  std::vector<std::tuple<int, uint64_t, int>> load;  // (jobs running, bytes held, index)
  for (int i = 0; i < std::max(1, gpu_count); ++i) {
    const std::string slot = std::to_string(i);
    auto jobs = running.find(slot);
    auto bytes = allocated.find(slot);
    load.emplace_back(jobs == running.end() ? 0 : jobs->second,
                      bytes == allocated.end() ? 0 : bytes->second, i);
  }
  std::sort(load.begin(), load.end());
  load.resize(std::min<size_t>(load.size(), static_cast<size_t>(std::max(1, count))));
  std::sort(load.begin(), load.end(),
            [](const auto& a, const auto& b) { return std::get<2>(a) < std::get<2>(b); });
  std::vector<std::string> slots;
  for (const auto& l : load) slots.push_back(std::to_string(std::get<2>(l)));
  return slots;
}

std::string JoinSlots(const std::vector<std::string>& slots) {
  std::string out;
  for (const std::string& s : slots) out += (out.empty() ? "" : ",") + s;
  return out;
}

AdmissionResult Admit(const std::vector<AdmissionJob>& pending, std::map<std::string, int> running,
                      const AdmissionLimits& limits, double now, AdmissionUsers* users) {
  AdmissionUsers local;
  AdmissionUsers& u = users != nullptr ? *users : local;
  std::vector<size_t> order(pending.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto submitted_before = [&pending](size_t x, size_t y) {
    const AdmissionJob& a = pending[x];
    const AdmissionJob& b = pending[y];
    if (a.submit_time != b.submit_time) return a.submit_time < b.submit_time;
    return a.id < b.id;
  };
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    if (pending[x].priority != pending[y].priority) {
      return pending[x].priority > pending[y].priority;
    }
    return submitted_before(x, y);
  });
  const int max_running = std::max(1, limits.max_running);
  std::map<int64_t, int> array_running = limits.array_running;
  AdmissionResult result;
  result.reasons.assign(pending.size(), nullptr);
  bool someone_blocked = false;
  // Once every slot is full, an eligible job without --gpu cannot start: no need to choose.
  bool all_full = false;
  auto decide = [&](size_t index) {
    const AdmissionJob& job = pending[index];
    const char*& reason = result.reasons[index];
    int& user_running = u.running[job.uid];
    if (limits.paused && !job.foreground) {
      reason = kReasonPaused;
    } else if (job.array_limit > 0 && array_running[job.array_job_id] >= job.array_limit) {
      reason = kReasonArrayLimit;  // its own array's limit: not a slot it could have had
    } else if (limits.max_running_per_user > 0 && !job.foreground &&
               user_running >= limits.max_running_per_user) {
      reason = kReasonUserLimit;
    } else if (all_full && job.gpu.empty() && !job.foreground) {
      reason = kReasonPriority;  // someone_blocked already holds
    } else {
      std::vector<std::string> slots =
          ChooseSlots(job.gpu, job.gpus, running, limits.gpu_count, limits.allocated);
      bool room = true;
      for (const std::string& slot : slots) room = room && running[slot] < max_running;
      if (job.foreground || room) {
        for (const std::string& slot : slots) ++running[slot];
        ++user_running;
        if (job.array_job_id != 0) ++array_running[job.array_job_id];
        u.starts.Took(job.uid);
        result.start.push_back({index, JoinSlots(slots)});
      } else {
        reason = someone_blocked ? kReasonPriority : kReasonResources;
        someone_blocked = true;
        // The least loaded slot is full: so is every slot.
        if (job.gpu.empty() && job.gpus <= 1) all_full = true;
      }
    }
  };
  // Each priority in turn: the jobs that wait for something of their own get their reason,
  // the eligible ones queue per user and the users take turns (Admit's contract).
  std::map<uid_t, std::vector<size_t>> per_user;  // eligible jobs, last first
  for (size_t group = 0; group < order.size();) {
    const int priority = pending[order[group]].priority;
    size_t end = group;
    per_user.clear();
    for (; end < order.size() && pending[order[end]].priority == priority; ++end) {
      const size_t index = order[end];
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
      } else {
        per_user[job.uid].push_back(index);
      }
    }
    group = end;
    // A min-heap of users by (running, last start, next job's submission); a user's key
    // changes only when its own job is decided, so it is pushed back with the new one.
    struct Turn {
      int running;
      uint64_t last_start;
      size_t next;  // index into pending of the user's next job
      uid_t uid;
    };
    auto later = [&submitted_before](const Turn& a, const Turn& b) {
      if (a.running != b.running) return a.running > b.running;
      if (a.last_start != b.last_start) return a.last_start > b.last_start;
      return submitted_before(b.next, a.next);
    };
    std::vector<Turn> heap;
    auto push = [&](uid_t uid, std::vector<size_t>& jobs) {
      heap.push_back({u.running[uid], u.starts.Last(uid), jobs.back(), uid});
      std::push_heap(heap.begin(), heap.end(), later);
    };
    for (auto& [uid, jobs] : per_user) {
      std::reverse(jobs.begin(), jobs.end());
      push(uid, jobs);
    }
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), later);
      Turn turn = heap.back();
      heap.pop_back();
      std::vector<size_t>& jobs = per_user[turn.uid];
      jobs.pop_back();
      decide(turn.next);
      if (!jobs.empty()) push(turn.uid, jobs);
    }
  }
  return result;
}

}  // namespace gshare
