// What an active job has used so far, as its row records it when it ends and as `gshare status`
// shows it: lease and wait seconds, peak bytes, swaps (whole-process checkpoints and restores
// among them), and its memory as the ledger counts it. Pure reads of the daemon's parts; the
// daemon's event loop.
#pragma once

#include <nlohmann/json.hpp>

#include "daemon/gpu/memory_coordinator.h"
#include "daemon/state/active_job.h"
#include "policy/arbiter.h"
#include "policy/memory_ledger.h"

namespace gshare {

// Writes into `r` what active job `id` (`job`) used until `now`: lease_seconds, wait_seconds,
// peak_bytes, swaps_out and swaps_in (its processes gone from the ledger included).
void RecordUsage(const Arbiter& arbiter, const MemoryLedger& ledger, JobId id, const ActiveJob& job,
                 TimePoint now, JobRecord* r);

// The "memory" object of job `id` in `gshare status --json` (docs/cli.md): its engine, bytes
// allocated, resident, swapped, fixed, staged and in host memory, its swap and checkpoint
// counters (bytes, seconds), and what it waits for ("SwapIn", a memory wait reason, or null).
// `job` is null for a job that is not active.
nlohmann::json JobMemoryJson(const MemoryLedger& ledger, const MemoryCoordinator& memory, JobId id,
                             const ActiveJob* job);

}  // namespace gshare
