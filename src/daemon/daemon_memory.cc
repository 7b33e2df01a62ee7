// The daemon's memory wiring (docs/memory.md, "The daemon's ledger and policy"): the ledger fed
// by the shims' reports, evictions sent, pinned host memory asked for ahead of the first
// eviction. The policy around exclusive turns is MemoryCoordinator's; the modes and residents
// SharingController's.
#include <algorithm>
#include <cstring>

#include <spdlog/spdlog.h>

#include "daemon/daemon.h"
#include "ipc/frame_io.h"

namespace gshare {

void Daemon::OnMemoryQuery(Connection& c, const Frame& f) {
  if (c.kind != Connection::Kind::kUnknown) return Drop(c.id, "a memory query after its hello");
  c.kind = Connection::Kind::kCli;  // nothing to undo when it closes
  proto::MemQueryMsg q;
  std::memcpy(&q, f.payload.data(), sizeof q);
  proto::MemViewMsg v{};
  v.gpu = q.gpu;
  auto it = table_.jobs.find(q.job_id);
  if (it != table_.jobs.end() && MayJoin(c, *it->second, q.token)) {
    const GpuKey gpu = FormatGpuUuid(q.gpu);
    v.others_fixed = ledger_.FixedOfOthers(gpu, q.job_id);
    v.job_used = ledger_.UsedBy(q.job_id, gpu);
    v.known = 1;
  }
  Send(c, EncodeFrame(proto::MsgType::kMemoryView,
                      std::string_view(reinterpret_cast<const char*>(&v), sizeof v)));
}

void Daemon::OnMemReport(Connection& c, const GpuKey& gpu, const proto::MemReportMsg& m) {
  ledger_.Report(c.id, c.job, gpu, m);
  if (m.engine == static_cast<uint32_t>(proto::MemoryEngine::kCheckpoint)) {
    engine_.StartHelper();  // cuInit takes seconds: paid before the first eviction
  }
  ActiveJob& job = *table_.jobs.at(c.job);
  job.peak_bytes = std::max(job.peak_bytes, ledger_.Totals(c.job).allocated);
  if (m.held_ms != 0) job.held_ms[{c.id, gpu}] = m.held_ms;
  if ((m.flags & proto::kReportAfterSwapIn) != 0) {
    if ((m.flags & proto::kReportSwapInFailed) != 0) {
      ++job.swapins_failed;
      ++job.swapins_failed_in_row;
      spdlog::warn("job {}: its swap-in on {} did not finish ({} in a row); it asks again", c.job,
                   gpu, job.swapins_failed_in_row);
    } else {
      job.swapins_failed_in_row = 0;
      if (m.swapin_bytes != 0) {
        timeline_.Note(TimelineKind::kSwapIn, c.job, gpu, c.pid, m.swapin_bytes,
                       static_cast<double>(m.swapin_ns) / 1e6);
      }
    }
    arbiter_.SwappedIn(gpu, m.epoch, Now());  // the holder's quantum starts now
    memory_.SwappedIn(gpu, c.job, m.epoch, m.swapin_bytes, static_cast<double>(m.swapin_ns) / 1e6);
  }
  // An allocation of the exclusive holder waits for room: taken from the others.
  if (m.demand > 0 && arbiter_.Holder(gpu) == c.job && !arbiter_.IsShared(gpu)) {
    memory_.HolderDemand(gpu, c.id, c.job);
  }
  sharing_.Update(gpu);
  messenger_.AskHolderToPin(gpu);
  if (memory_.NeedsReprice(gpu)) Apply(arbiter_.Recontend(gpu));
  // A refused grant that is possible now goes out at the loop's Tick after this read.
}

void Daemon::SendEvictions(const GpuKey& gpu, const MemoryLedger::Plan& plan) {
  for (const MemoryLedger::Eviction& e : plan.evictions) {
    if (e.checkpoint) {
      engine_.Checkpoint(e.conn, "room for another job on " + gpu);
      continue;
    }
    messenger_.Evict(e.conn, gpu, e.bytes);
  }
}

}  // namespace gshare
