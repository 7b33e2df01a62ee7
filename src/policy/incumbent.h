// The incumbent: which job keeps running when a GPU leaves shared mode for exclusive mode
// (Arbiter::SetShared's `first`; the daemon gathers the candidates,
// MemoryCoordinator::ExclusiveFirst). Pure function; any thread.
//
// A job whose memory is on the GPU already runs first: granting another first would move
// memory at once, before any host pool is pinned (docs/memory.md, "The daemon's ledger and
// policy"). Among the holders, the one longest in its current GPU phase keeps running: of
// jobs with like steps it is the nearest to the end of its phase, so the jobs settle at once
// into turns that fill each other's CPU phases. Keeping the newcomer instead (the least
// memory to move, the rule before) cut the other job's first step in two and left both jobs
// idle together in their first CPU phases (docs/benchmarks.md, "Who keeps the GPU at the
// switch to exclusive mode"). Among equals, and among jobs that hold nothing, the least
// memory to move wins.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "policy/arbiter.h"

namespace gshare {

struct IncumbentCandidate {
  JobId job = 0;
  // How long the job has been in its current GPU phase (since it began holding the GPU in
  // shared mode or since its latest idle gap ended, whichever is later); nullopt when it
  // holds nothing.
  std::optional<Millis> phase;
  bool feasible = false;  // its memory fits once others are evicted (MemoryLedger::MakeRoom)
  uint64_t bytes = 0;     // bytes to evict for it to run (MemoryLedger::Plan::bytes)
};

// The job to run first, or nullopt when no candidate is feasible.
std::optional<JobId> PickIncumbent(const std::vector<IncumbentCandidate>& candidates);

}  // namespace gshare
