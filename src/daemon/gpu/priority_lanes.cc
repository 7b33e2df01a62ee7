#include "daemon/gpu/priority_lanes.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gshare {

PriorityLanes::~PriorityLanes() {
  if (board_ == nullptr) return;
  munmap(board_, proto::kBoardBytes);
  unlink(path_.c_str());
}

Status PriorityLanes::Open(const std::string& path) {
  unlink(path.c_str());  // a stale board of an earlier daemon (its processes keep their copy)
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Status::Error("cannot create " + path + ": " + strerror(errno));
  void* p = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(proto::kBoardBytes)) == 0) {
    p = mmap(nullptr, proto::kBoardBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  int err = errno;
  close(fd);
  if (p == MAP_FAILED) {
    unlink(path.c_str());
    return Status::Error("cannot map " + path + ": " + strerror(err));
  }
  board_ = static_cast<proto::BoardSlot*>(p);
  path_ = path;
  return Status::Ok();
}

void PriorityLanes::Sit(const GpuKey& gpu, ConnId conn, int priority) {
  if (board_ == nullptr) return;
  auto it = slots_.find(gpu);
  if (it == slots_.end()) {
    if (slots_.size() >= proto::kBoardSlots) return;
    it = slots_.emplace(gpu, static_cast<int>(slots_.size())).first;
  }
  seats_.Sit(gpu, it->second, conn, priority);
}

void PriorityLanes::Leave(ConnId conn) {
  for (const PrioritySeats::Freed& f : seats_.Leave(conn)) Clear(f.slot, f.seat);
}

void PriorityLanes::SetPriority(ConnId conn, int priority) { seats_.SetPriority(conn, priority); }

void PriorityLanes::Quiet(ConnId conn) {
  for (const auto& [gpu, slot] : slots_) {
    if (std::optional<PrioritySeats::Seat> s = seats_.SeatOf(conn, gpu)) Clear(slot, s->seat);
  }
}

void PriorityLanes::Clear(int slot, int seat) {
  if (board_ == nullptr) return;
  board_[slot].mps_seats.fetch_and(~(uint64_t{1} << seat), std::memory_order_acq_rel);
  board_[slot].behind_seats.fetch_and(~(uint64_t{1} << seat), std::memory_order_acq_rel);
  board_[slot].beside_seats.fetch_and(~(uint64_t{1} << seat), std::memory_order_acq_rel);
  proto::ClearBusy(board_[slot], uint64_t{1} << seat);
}

std::vector<PriorityLanes::Message> PriorityLanes::TakeMessages() {
  std::vector<Message> out;
  for (const PrioritySeats::Change& c : seats_.TakeChanges()) {
    Message m{c.conn, c.gpu, 0, 0, 0, false, 0};
    if (c.seat) {
      m.slot = static_cast<uint32_t>(c.seat->slot);
      m.seat_plus_one = static_cast<uint32_t>(c.seat->seat) + 1;
      m.yield_mask = c.seat->yield_mask;
      m.watched = c.seat->watched;
      m.yielders = static_cast<uint32_t>(c.seat->yielders);
    }
    out.push_back(m);
  }
  return out;
}

uint64_t PriorityLanes::BusyMask(const GpuKey& gpu) const {
  auto it = slots_.find(gpu);
  if (board_ == nullptr || it == slots_.end()) return 0;
  return board_[it->second].busy.load(std::memory_order_acquire);
}

bool PriorityLanes::AnyBusy() const {
  for (const auto& [gpu, slot] : slots_) {
    if (board_[slot].busy.load(std::memory_order_relaxed) != 0) return true;
  }
  return false;
}

std::vector<ConnId> PriorityLanes::BusyConns() const {
  std::vector<ConnId> out;
  for (const auto& [gpu, slot] : slots_) {
    const uint64_t busy = BusyMask(gpu);
    if (busy == 0) continue;
    for (const PrioritySeats::Seated& s : seats_.SeatedAt(gpu)) {
      if ((busy >> s.seat & 1) != 0) out.push_back(s.conn);
    }
  }
  return out;
}

nlohmann::json PriorityLanes::Json(const GpuKey& gpu) const {
  nlohmann::json seats = nlohmann::json::array();
  const uint64_t busy = BusyMask(gpu);
  for (const PrioritySeats::Seated& seated : seats_.SeatedAt(gpu)) {
    std::optional<PrioritySeats::Seat> s = seats_.SeatOf(seated.conn, gpu);
    if (!s) continue;
    seats.push_back({{"conn", seated.conn},
                     {"seat", seated.seat},
                     {"priority", seated.priority},
                     {"busy", (busy >> seated.seat & 1) != 0},
                     {"yields", s->yield_mask != 0},
                     {"held_back", (busy & s->yield_mask) != 0}});
  }
  return seats;
}

}  // namespace gshare
