#include "policy/sharing_mode.h"

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

std::optional<TimePoint> SharingMode::NextDeadline() const {
  std::optional<TimePoint> next;
  for (const auto& [gpu, s] : gpus_) {
    if (!s.held || !s.exclusive_since) continue;
    TimePoint at = *s.exclusive_since + kSettle;
    if (!next || at < *next) next = at;
  }
  return next;
}

uint64_t SharingMode::Switches(const GpuKey& gpu) const {
  auto it = gpus_.find(gpu);
  return it == gpus_.end() ? 0 : it->second.switches;
}

}  // namespace gshare
