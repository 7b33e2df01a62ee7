// The daemon's side of idle memory staging: which GPUs to look at, when, and for whom.
#include "daemon/gpu/idle_stager.h"

#include <algorithm>

namespace gshare {

void IdleStager::Active(JobId job) {
  active_at_[job] = clock_.Now();
  staging_.Active(job);
}

void IdleStager::ForgetJob(JobId job) { active_at_.erase(job); }

std::optional<Millis> IdleStager::IdleFor(JobId job) const {
  auto it = active_at_.find(job);
  if (it == active_at_.end()) return std::nullopt;
  const TimePoint now = clock_.Now();
  const Arbiter::JobUsage u = arbiter_.Usage(job, now);
  if (u.holding || u.waiting) return std::nullopt;
  return std::chrono::duration_cast<Millis>(now - it->second);
}

std::optional<TimePoint> IdleStager::Tick(const std::vector<GpuKey>& gpus) {
  if (after_.count() <= 0 || !arbiter_.enabled()) return std::nullopt;
  const TimePoint now = clock_.Now();
  if (now < next_check_) return due_;
  next_check_ = now + kCheck;
  std::optional<TimePoint> next;     // when a job with memory becomes idle long enough
  std::map<GpuKey, bool> contended;  // some job holds or waits for the GPU
  for (const Arbiter::GpuView& v : arbiter_.Gpus(now)) {
    contended[v.gpu] = !v.holding.empty() || v.holder.has_value() || !v.waiters.empty();
  }
  for (const GpuKey& gpu : gpus) {
    IdleStaging::GpuState state;
    state.capacity = ledger_.Capacity(gpu);
    state.used = ledger_.Used(gpu);
    state.conns = ledger_.ConnsOn(gpu);
    state.contended = contended[gpu];
    for (const MemoryLedger::ConnMemory& m : state.conns) {
      std::optional<Millis> idle = IdleFor(m.job);
      if (!idle || m.resident <= m.staged + IdleStaging::kMinBytes) continue;
      const TimePoint due = *idle < after_ ? now + (after_ - *idle) : now + kRecheck;
      next = next ? std::min(*next, due) : due;
    }
    auto requests = staging_.Plan(
        gpu, state, [this](JobId j) { return IdleFor(j); },
        [this](JobId j) { return ledger_.HostLeftFor(host_.JobOwner(j)); });
    for (const IdleStaging::Request& r : requests) host_.SendStage(r.conn, gpu, r.bytes);
  }
  if (next) next = std::max(*next, next_check_);
  due_ = next;
  return next;
}

}  // namespace gshare
