// Phase staggering's daemon side: who reports gaps, and the stretches their reports lead to.
#include "daemon/gpu/stagger_coordinator.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace gshare {

void StaggerCoordinator::Update(const GpuKey& gpu) {
  if (!host_.KnowsGpu(gpu)) return;
  std::vector<JobId> jobs = arbiter_.JobsOn(gpu);
  // Staggering is between equals: a higher-priority job's gap is never stretched for a lower
  // one, whose work the priority board already moves into those gaps.
  bool want = enabled_ && arbiter_.IsShared(gpu) && jobs.size() >= 2 && arbiter_.OnePriorityOn(gpu);
  if (!want) stagger_.Clear(gpu);
  for (const auto& [conn, job] : host_.Shims()) {
    bool holds = arbiter_.ConnHolds(conn) && std::find(jobs.begin(), jobs.end(), job) != jobs.end();
    auto it = watched_.find(conn);
    bool watched = it != watched_.end() && it->second.count(gpu) != 0;
    // The state first, then the message: a send that fails drops the peer, and the daemon's
    // drop calls ForgetConn, which erases this connection's entry (and `it` with it).
    if (want && holds && !watched) {
      watched_[conn].insert(gpu);
      host_.SendGapWatch(conn, gpu, true);
    } else if (!(want && holds) && watched) {
      it->second.erase(gpu);
      if (holds) host_.SendGapWatch(conn, gpu, false);
    }
  }
}

void StaggerCoordinator::OnReport(JobId job, const GpuKey& gpu, TimePoint begin, TimePoint end) {
  if (!enabled_ || !arbiter_.IsShared(gpu)) return;
  std::optional<Stagger::Order> order =
      stagger_.Report(gpu, job, begin, end, arbiter_.JobsOn(gpu), clock_.Now());
  if (!order) return;
  spdlog::info(
      "{}: the sharing jobs idle together ({} ms of the last gap): job {}'s next gap "
      "stretched to {} ms (shift {} ms)",
      gpu, order->co_idle.count(), order->job, order->gap.count(), order->shift.count());
  for (const auto& [c, j] : host_.Shims()) {
    if (j == order->job && arbiter_.ConnHolds(c)) host_.SendStretch(c, gpu, order->gap);
  }
}

void StaggerCoordinator::Released(ConnId conn, const GpuKey& gpu) {
  if (auto it = watched_.find(conn); it != watched_.end()) it->second.erase(gpu);
}

void StaggerCoordinator::AddJson(const GpuKey& gpu, nlohmann::json* g) const {
  int watched = 0;
  for (const auto& [conn, gpus] : watched_) watched += gpus.count(gpu) != 0 ? 1 : 0;
  (*g)["gap_watch"] = watched;
  (*g)["stretches"] = stagger_.Stretches(gpu);
}

}  // namespace gshare
