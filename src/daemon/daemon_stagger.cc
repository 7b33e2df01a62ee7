// The daemon's side of phase staggering (src/policy/stagger.h): shared-mode holders report their
// idle gaps; when the holders keep idling together, one job's next gap is stretched.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "daemon/daemon.h"

namespace gshare {

void Daemon::UpdateGapWatch(const GpuKey& gpu) {
  if (gpus_.count(gpu) == 0) return;
  std::vector<JobId> jobs = arbiter_.JobsOn(gpu);
  // Staggering is between equals: a higher-priority job's gap is never stretched for a lower
  // one, whose work the priority board already moves into those gaps.
  bool want = options_.config.scheduler.stagger && arbiter_.IsShared(gpu) && jobs.size() >= 2 &&
              arbiter_.OnePriorityOn(gpu);
  if (!want) stagger_.Clear(gpu);
  for (auto& [id, conn] : conns_) {
    if (conn->kind != Connection::Kind::kShim) continue;
    bool holds =
        arbiter_.ConnHolds(id) && std::find(jobs.begin(), jobs.end(), conn->job) != jobs.end();
    bool watched = conn->watched.count(gpu) != 0;
    if (want && holds && !watched) {
      SendLeaseMsg(id, proto::MsgType::kGapWatch, gpu, 0, 1);
      conn->watched.insert(gpu);
    } else if (!(want && holds) && watched) {
      if (holds) SendLeaseMsg(id, proto::MsgType::kGapWatch, gpu, 0, 0);
      conn->watched.erase(gpu);
    }
  }
}

void Daemon::AddStaggerJson(const GpuKey& gpu, nlohmann::json* g) const {
  int watched = 0;
  for (const auto& [id, conn] : conns_) watched += conn->watched.count(gpu) != 0 ? 1 : 0;
  (*g)["gap_watch"] = watched;
  (*g)["stretches"] = stagger_.Stretches(gpu);
}

void Daemon::OnGapReport(Connection& c, const proto::GapMsg& m) {
  const GpuKey gpu = RunsOn(c, FormatGpuUuid(m.gpu));
  // A report that crossed the switch to exclusive mode (or sent after a release) is late.
  if (!options_.config.scheduler.stagger || !arbiter_.IsShared(gpu)) return;
  TimePoint begin{std::chrono::nanoseconds(m.begin_ns)};
  TimePoint end{std::chrono::nanoseconds(m.end_ns)};
  std::optional<Stagger::Order> order =
      stagger_.Report(gpu, c.job, begin, end, arbiter_.JobsOn(gpu), Now());
  if (!order) return;
  spdlog::info(
      "{}: the sharing jobs idle together ({} ms of the last gap): job {}'s next gap "
      "stretched to {} ms (shift {} ms)",
      gpu, order->co_idle.count(), order->job, order->gap.count(), order->shift.count());
  for (auto& [id, conn] : conns_) {
    if (conn->kind == Connection::Kind::kShim && conn->job == order->job &&
        arbiter_.ConnHolds(id)) {
      SendLeaseMsg(id, proto::MsgType::kStretchGap, gpu, 0,
                   static_cast<uint64_t>(order->gap.count()));
    }
  }
}

}  // namespace gshare
