#include "daemon/gpu/lease_outbox.h"

#include <signal.h>

#include <spdlog/spdlog.h>

#include "ipc/frame_io.h"

namespace gshare {

void LeaseOutbox::SendLeaseFrame(const LeaseAction& a) {
  Connection* conn = p_.table.Live(a.conn);
  if (conn == nullptr) return;
  proto::LeaseMsg m{};
  m.gpu = p_.table.NamedBy(*conn, a.gpu);
  m.epoch = a.epoch;
  proto::MsgType type = proto::MsgType::kLeaseContended;
  switch (a.kind) {
    case LeaseAction::Kind::kGrant:
      type = proto::MsgType::kLeaseGrant;
      m.bytes = p_.memory.PrepareGrant(a.gpu, conn->job, a.epoch);
      p_.timeline.Granting(a.gpu, conn->job, conn->pid);
      break;
    case LeaseAction::Kind::kDrop:
      type = proto::MsgType::kLeaseDrop;
      p_.memory.Dropped(a.gpu);
      p_.timeline.Note(TimelineKind::kDrop, conn->job, a.gpu, conn->pid);
      break;
    case LeaseAction::Kind::kContended: m.bytes = p_.memory.PriceHandoff(a.gpu); break;
    default: return;  // not a lease frame (Apply sends the signals)
  }
  spdlog::debug("lease message {} for {} epoch {} -> pid {}", static_cast<int>(type), a.gpu,
                a.epoch, conn->pid);
  std::string frame = EncodeMsgFrame(type, m);
  if (type == proto::MsgType::kLeaseGrant && p_.checkpoints.DeferGrant(a, frame)) return;
  const pid_t pid = conn->pid;  // `send` may drop the connection
  if (!send_(a.conn, frame)) {
    spdlog::warn("cannot reach pid {}; its lease is reclaimed", pid);
  } else if (type == proto::MsgType::kLeaseGrant) {
    p_.stagger.Update(a.gpu);
  }
}

void LeaseOutbox::Apply(const LeaseActions& actions) {
  for (const LeaseAction& a : actions) {
    switch (a.kind) {
      case LeaseAction::Kind::kGrant:
      case LeaseAction::Kind::kDrop:
      case LeaseAction::Kind::kContended: SendLeaseFrame(a); break;
      case LeaseAction::Kind::kStop:
        spdlog::warn("pid {} did not release {} within the grace period: stopping it", a.pid,
                     a.gpu);
        kill(a.pid, SIGSTOP);
        break;
      case LeaseAction::Kind::kContinue: kill(a.pid, SIGCONT); break;
    }
  }
  p_.timeline.SyncHolds(p_.arbiter, p_.table.GpuKeys());
}

void LeaseOutbox::HandoffDone(const GpuKey& gpu, const HandoffLog::Handoff& h) {
  p_.timeline.Note(
      TimelineKind::kHandoff, h.to, gpu, 0, h.evict_bytes + h.swapin_bytes, h.total_ms,
      fmt::format("from job {}: drain {:.0f} ms, checkpoints {:.0f} ms, swap-in {:.0f} "
                  "ms (room wait {:.0f} ms), other {:.0f} ms, bound {:.0f} ms",
                  h.from, h.drain_ms, h.checkpoint_ms, h.swapin_ms, h.room_wait_ms, h.other_ms,
                  h.bound_ms));
}

void LeaseOutbox::SendEvictions(const GpuKey& gpu, const MemoryLedger::Plan& plan) {
  for (const MemoryLedger::Eviction& e : plan.evictions) {
    if (e.checkpoint) {
      p_.checkpoints.Checkpoint(e.conn, "room for another job on " + gpu);
      continue;
    }
    p_.messenger.Evict(e.conn, gpu, e.bytes);
  }
}

}  // namespace gshare
