// The incumbent at the switch to exclusive mode; see incumbent.h.
#include "policy/incumbent.h"

namespace gshare {

std::optional<JobId> PickIncumbent(const std::vector<IncumbentCandidate>& candidates) {
  const IncumbentCandidate* best = nullptr;
  for (const IncumbentCandidate& c : candidates) {
    if (!c.feasible) continue;
    if (best == nullptr) {
      best = &c;
      continue;
    }
    Millis phase = c.phase.value_or(Millis{-1});
    Millis best_phase = best->phase.value_or(Millis{-1});
    if (phase > best_phase || (phase == best_phase && c.bytes < best->bytes)) best = &c;
  }
  if (best == nullptr) return std::nullopt;
  return best->job;
}

}  // namespace gshare
