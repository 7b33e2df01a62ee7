#include "daemon/jobs/job_usage.h"

#include <string>

namespace gshare {

void RecordUsage(const Arbiter& arbiter, const MemoryLedger& ledger, JobId id, const ActiveJob& job,
                 TimePoint now, JobRecord* r) {
  Arbiter::JobUsage u = arbiter.Usage(id, now);
  r->lease_seconds = job.earlier_lease_seconds + u.lease_seconds;
  r->wait_seconds = job.earlier_wait_seconds + u.wait_seconds;
  r->peak_bytes = job.peak_bytes;
  // As `gshare status` counts them: whole-process checkpoints and restores are evictions and
  // swap-ins too.
  MemoryLedger::JobTotals t = ledger.Totals(id);
  r->swaps_out = job.gone_swaps_out + t.swaps_out + job.checkpoints;
  r->swaps_in = job.gone_swaps_in + t.swaps_in + job.restores;
}

nlohmann::json JobMemoryJson(const MemoryLedger& ledger, const MemoryCoordinator& memory, JobId job,
                             const ActiveJob* active) {
  MemoryLedger::JobTotals t = ledger.Totals(job);
  std::string engine(MemoryEngineName(static_cast<MemoryEngine>(t.engine)));
  if (active != nullptr && active->record.memory && t.allocated == 0) {
    engine = MemoryEngineName(*active->record.memory);
  }
  nlohmann::json waiting_for = nullptr;
  if (const std::string* wait = memory.WaitReason(job)) waiting_for = *wait;
  uint64_t checkpoints = 0, restores = 0, swapins_failed = 0;
  // Its processes gone from the ledger keep counting: the counters only ever grow.
  if (active != nullptr) {
    t.swaps_out += active->gone_swaps_out;
    t.swaps_in += active->gone_swaps_in;
    t.bytes_out += active->gone_bytes_out;
    t.bytes_in += active->gone_bytes_in;
  }
  double checkpoint_s = 0, restore_s = 0;
  if (active != nullptr) {
    checkpoints = active->checkpoints;
    restores = active->restores;
    checkpoint_s = active->checkpoint_ms / 1000;
    restore_s = active->restore_ms / 1000;
    swapins_failed = active->swapins_failed;
    if (waiting_for.is_null() && active->swapins_failed_in_row > 0) waiting_for = "SwapIn";
  }
  return {{"engine", engine},
          {"checkpointed", t.checkpointed},
          {"checkpoints", checkpoints},
          {"restores", restores},
          {"checkpoint_seconds", checkpoint_s},
          {"restore_seconds", restore_s},
          {"allocated", t.allocated},
          {"resident", t.resident},
          {"swapped", t.swapped},
          {"fixed", t.fixed},
          {"staged", t.staged},
          {"host_bytes", t.host_bytes},
          {"swaps_out", t.swaps_out},
          {"swaps_in", t.swaps_in},
          {"bytes_out", t.bytes_out},
          {"bytes_in", t.bytes_in},
          {"swap_seconds", static_cast<double>(t.swap_ns) / 1e9},
          {"swapins_failed", swapins_failed},
          {"waiting_for", waiting_for}};
}

}  // namespace gshare
