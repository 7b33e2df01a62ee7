// ActiveJob: the daemon's record of a job that runs or is suspended: its row, its processes'
// connections, what it used so far, and where a cancel, a requeue or a suspension stands.
// Plain data; the daemon's event loop (one thread) is its only reader and writer.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "policy/types.h"
#include "model/job_record.h"

namespace gshare {

struct ActiveJob {
  JobRecord record;
  bool ended = false;  // the runner reported the end (or vanished)
  bool adhoc = false;  // a preloaded process not started by `gshare run`
  // No runner connection (re-adopted after a daemon restart, or a supervisor not attached
  // yet): its runner's liveness is polled instead.
  bool orphan = false;
  bool readopted = false;            // running when this daemon started
  std::optional<TimePoint> kill_at;  // cancel/requeue: SIGKILL the group then
  std::set<ConnId> shims;
  uint64_t peak_bytes = 0;
  // GPU time of the job under earlier daemons (a re-adopted job's stored row): the arbiter
  // counts from this daemon's start, RecordUsage adds these.
  double earlier_lease_seconds = 0, earlier_wait_seconds = 0;
  // Evictions and swap-ins of its processes that have left the ledger (gone_swaps_out/in):
  // the ledger keeps only the live ones' counters.
  uint64_t gone_swaps_out = 0, gone_swaps_in = 0;
  uint64_t gone_bytes_out = 0, gone_bytes_in = 0;
  // gshare suspend: the lease drains, the processes are checkpointed, then stopped.
  enum class Suspension { kNone, kDraining, kCheckpointing, kStopped };
  Suspension suspension = Suspension::kNone;
  uint64_t suspend_seq = 0;  // the last checkpoint request of the suspension
  // Checkpoint engine counters (status): whole-process checkpoints and restores.
  uint64_t checkpoints = 0, restores = 0;
  double checkpoint_ms = 0, restore_ms = 0;
  uint64_t moves = 0;  // onto another GPU: resume --gpu and the scheduler's (status "moves")
  // Swap-ins that did not finish (kReportSwapInFailed): in all, and since the last one that
  // did (while > 0 the job waits to get its memory back: status waiting_for "SwapIn").
  uint64_t swapins_failed = 0, swapins_failed_in_row = 0;
  // Per process and GPU: ms its submissions waited for higher priorities (kMemReport).
  std::map<std::pair<ConnId, GpuKey>, uint64_t> held_ms;
};

}  // namespace gshare
