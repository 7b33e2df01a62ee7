#include "daemon/gpu/shim_messenger.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <string>

#include "base/process_identity.h"
#include "ipc/frame_io.h"

namespace gshare {

bool ShimMessenger::SendLeaseMsg(ConnId conn, proto::MsgType type, const GpuKey& gpu,
                                 uint64_t epoch, uint64_t bytes) {
  const Connection* c = p_.table.Live(conn);
  if (c == nullptr) return false;
  proto::LeaseMsg m{};
  m.gpu = p_.table.NamedBy(*c, gpu);
  m.epoch = epoch;
  m.bytes = bytes;
  return send_(conn, EncodeMsgFrame(type, m));
}

void ShimMessenger::Evict(ConnId conn, const GpuKey& gpu, uint64_t bytes) {
  const bool sent = SendLeaseMsg(conn, proto::MsgType::kEvict, gpu, 0, bytes);
  if (const Connection* victim = sent ? p_.table.Live(conn) : nullptr; victim != nullptr) {
    p_.timeline.Note(TimelineKind::kSwapOut, victim->job, gpu, victim->pid, bytes);
  }
  spdlog::debug("evict {} bytes of connection {} on {}{}", bytes, conn, gpu,
                sent ? "" : ": not sent");
  p_.ledger.NoteEviction(conn, gpu, bytes);
}

void ShimMessenger::AskHolderToPin(const GpuKey& gpu) {
  std::optional<JobId> holder = p_.arbiter.Holder(gpu);
  if (p_.arbiter.IsShared(gpu) || !holder) return;
  for (auto& [id, conn] : p_.table.conns) {
    if (conn->kind == Connection::Kind::kShim && conn->job == *holder) AskToPin(*conn, gpu);
  }
}

void ShimMessenger::AskToPin(Connection& c, const GpuKey& gpu) {
  uint64_t bytes = p_.ledger.PoolToPin(c.job, gpu);
  uint64_t& asked = c.prepared[gpu];
  if (bytes > asked + (256ull << 20)) {
    asked = bytes;
    spdlog::debug("pin {} bytes ahead: connection {} on {}", bytes, c.id, gpu);
    SendLeaseMsg(c.id, proto::MsgType::kSwapPrepare, gpu, 0, bytes);
  }
}

void ShimMessenger::SendSeats() {
  for (const PriorityLanes::Message& s : p_.lanes.TakeMessages()) {
    const Connection* c = p_.table.Live(s.conn);
    if (c == nullptr) continue;
    proto::LeaseMsg m{};
    m.gpu = p_.table.NamedBy(*c, s.gpu);
    m.epoch = s.slot;
    m.reason = s.seat_plus_one;
    m.bytes = s.yield_mask;
    m.ordinal = static_cast<int32_t>((s.watched ? 1u : 0u) | std::min(s.yielders, 255u) << 8);
    send_(s.conn, EncodeMsgFrame(proto::MsgType::kBoardSeat, m));
  }
}

std::optional<TimePoint> ShimMessenger::NextLanesCheck() const {
  if (!p_.lanes.AnyBusy()) return std::nullopt;
  return next_lanes_check_;
}

void ShimMessenger::QuietStoppedSeats(TimePoint now) {
  if (now < next_lanes_check_) return;
  next_lanes_check_ = now + kLanesCheck;
  for (ConnId id : p_.lanes.BusyConns()) {
    const Connection* c = p_.table.Live(id);
    std::optional<char> state = c != nullptr ? ProcessState(c->pid) : std::nullopt;
    if (state && *state != 'T' && *state != 't' && *state != 'Z' && *state != 'X') continue;
    spdlog::info("pid {} is {}: its busy mark on the priority board is cleared",
                 c != nullptr ? c->pid : 0, state ? "stopped" : "gone");
    p_.lanes.Quiet(id);
  }
}

void ShimMessenger::SendStage(ConnId conn, const GpuKey& gpu, uint64_t bytes) {
  const Connection* c = p_.table.Live(conn);
  if (c == nullptr) return;
  spdlog::info("{}: idle on {}; staging {} bytes of pid {} in host memory", JobName(c->job), gpu,
               bytes, c->pid);
  SendLeaseMsg(conn, proto::MsgType::kSwapStage, gpu, 0, bytes);
}

bool ShimMessenger::SendGapWatch(ConnId conn, const GpuKey& gpu, bool on) {
  return SendLeaseMsg(conn, proto::MsgType::kGapWatch, gpu, 0, on ? 1 : 0);
}

void ShimMessenger::SendStretch(ConnId conn, const GpuKey& gpu, Millis gap) {
  SendLeaseMsg(conn, proto::MsgType::kStretchGap, gpu, 0, static_cast<uint64_t>(gap.count()));
}

}  // namespace gshare
