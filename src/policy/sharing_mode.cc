#include "policy/sharing_mode.h"

#include <algorithm>
#include <vector>

namespace gshare {

bool SharingMode::Want(const GpuKey& gpu, bool sharing_on, const MemoryLedger& ledger,
                       const Arbiter& arbiter, TimePoint now) {
  State& s = gpus_[gpu];
  s.held = false;
  bool fits = sharing_on && ledger.Fits(gpu);
  if (fits) {
    for (JobId j : arbiter.JobsOn(gpu)) fits = fits && ledger.Reported(gpu, j);
  }
  if (!fits) return false;
  if (!arbiter.IsShared(gpu) && s.exclusive_since && now - *s.exclusive_since < kSettle) {
    s.held = true;
    return false;
  }
  return true;
}

void SharingMode::Switched(const GpuKey& gpu, bool shared, TimePoint now) {
  State& s = gpus_[gpu];
  ++s.switches;
  s.held = false;
  if (!shared) s.exclusive_since = now;
}

std::set<JobId> SharingMode::Residents(const GpuKey& gpu, const std::function<bool(JobId)>& allowed,
                                       const MemoryLedger& ledger, const Arbiter& arbiter,
                                       TimePoint now) {
  State& s = gpus_[gpu];
  s.residents_held = false;
  std::set<JobId> want;
  const std::set<JobId> jobs = OnGpu(gpu, ledger, arbiter);
  int top = 0;
  bool lower = false;
  for (JobId j : jobs) top = std::max(top, arbiter.PriorityOf(j));
  std::map<JobId, uint64_t> need;
  for (const MemoryLedger::ConnMemory& c : ledger.ConnsOn(gpu)) {
    if (!c.suspended) need[c.job] += ledger.Need(gpu, c.conn);
  }
  uint64_t top_need = 0;
  bool reported = true;
  for (JobId j : jobs) {
    if (arbiter.PriorityOf(j) == top) {
      reported = reported && ledger.Reported(gpu, j);
      want.insert(j);
      top_need += need[j];
    } else {
      lower = true;
    }
  }
  const uint64_t capacity = ledger.Capacity(gpu);
  const uint64_t room = capacity > ledger.Unseen(gpu) ? capacity - ledger.Unseen(gpu) : 0;
  // The lower jobs need not fit beside them: a lower job's turn gets only room that is free
  // or staged (MemoryLedger::MakeRoom), so the top jobs never give up the GPU for it.
  bool fits = lower && reported && top_need <= room;
  for (JobId j : want) fits = fits && allowed(j);
  if (!fits) want.clear();
  if (want.empty() && !s.residents.empty() && s.residents_since &&
      now - *s.residents_since < kSettle) {
    s.residents_held = true;
    return s.residents;
  }
  if (!want.empty() && s.residents.empty()) s.residents_since = now;
  s.residents = want;
  return want;
}

std::set<JobId> SharingMode::OnGpu(const GpuKey& gpu, const MemoryLedger& ledger,
                                   const Arbiter& arbiter) {
  std::vector<JobId> asking = arbiter.JobsOn(gpu);
  std::set<JobId> on(asking.begin(), asking.end());
  for (const MemoryLedger::ConnMemory& c : ledger.ConnsOn(gpu)) {
    if (!c.suspended) on.insert(c.job);
  }
  return on;
}

std::optional<TimePoint> SharingMode::NextDeadline() const {
  std::optional<TimePoint> next;
  auto consider = [&next](TimePoint at) {
    if (!next || at < *next) next = at;
  };
  for (const auto& [gpu, s] : gpus_) {
    if (s.held && s.exclusive_since) consider(*s.exclusive_since + kSettle);
    if (s.residents_held && s.residents_since) consider(*s.residents_since + kSettle);
  }
  return next;
}

uint64_t SharingMode::Switches(const GpuKey& gpu) const {
  auto it = gpus_.find(gpu);
  return it == gpus_.end() ? 0 : it->second.switches;
}

}  // namespace gshare
