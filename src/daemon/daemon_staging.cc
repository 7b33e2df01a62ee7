// Idle memory staging (docs/memory.md, "Idle memory is staged"): the daemon tracks how long
// each job has been idle and, through IdleStaging, asks the shims of idle jobs to copy their
// memory to host memory ahead of an eviction (kSwapStage).
#include <spdlog/spdlog.h>

#include "daemon/daemon.h"

namespace gshare {

void Daemon::NoteActive(JobId job, TimePoint now) {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return;
  it->second->active_at = now;
  staging_.Active(job);
}

std::optional<Millis> Daemon::IdleFor(JobId job, TimePoint now) const {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return std::nullopt;
  const Arbiter::JobUsage u = arbiter_.Usage(job, now);
  if (u.holding || u.waiting) return std::nullopt;
  return std::chrono::duration_cast<Millis>(now - it->second->active_at);
}

std::optional<TimePoint> Daemon::StageIdleMemory(TimePoint now) {
  const Millis after = options_.config.memory.idle_stage_after;
  if (after.count() <= 0 || !arbiter_.enabled()) return std::nullopt;
  if (now < next_stage_check_) return stage_due_;
  next_stage_check_ = now + kStageCheck;
  std::optional<TimePoint> next;     // when a job with memory becomes idle long enough
  std::map<GpuKey, bool> contended;  // some job holds or waits for the GPU
  for (const Arbiter::GpuView& v : arbiter_.Gpus(now)) {
    contended[v.gpu] = !v.holding.empty() || v.holder.has_value() || !v.waiters.empty();
  }
  for (const auto& [gpu, info] : gpus_) {
    IdleStaging::GpuState state;
    state.capacity = ledger_.Capacity(gpu);
    state.used = ledger_.Used(gpu);
    state.conns = ledger_.ConnsOn(gpu);
    state.contended = contended[gpu];
    for (const MemoryLedger::ConnMemory& m : state.conns) {
      std::optional<Millis> idle = IdleFor(m.job, now);
      if (!idle || m.resident <= m.staged + IdleStaging::kMinBytes) continue;
      // Idle long enough but not asked (no pressure yet, or asked already): look again in a
      // second, in case the pressure comes without an event of this loop's own.
      const TimePoint due = *idle < after ? now + (after - *idle) : now + kStageRecheck;
      next = next ? std::min(*next, due) : due;
    }
    auto requests = staging_.Plan(
        gpu, state, [this, now](JobId j) { return IdleFor(j, now); },
        [this](JobId j) { return ledger_.HostLeftFor(JobOwner(j)); });
    for (const IdleStaging::Request& r : requests) {
      const Connection* c = Live(r.conn);
      if (c == nullptr) continue;
      spdlog::info("{}: idle on {}; staging {} bytes of pid {} in host memory", JobName(c->job),
                   gpu, r.bytes, c->pid);
      SendLeaseMsg(r.conn, proto::MsgType::kSwapStage, gpu, 0, r.bytes);
    }
  }
  if (next) next = std::max(*next, next_stage_check_);
  stage_due_ = next;
  return next;
}

}  // namespace gshare
