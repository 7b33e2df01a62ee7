// PriorityLanes: the daemon's side of the priority board (gshare/priority_board.h;
// docs/design.md, "Priority lanes"). Owns the board file beside the socket and its mapping,
// gives each GPU a slot and each shim connection that asks for a GPU a seat there
// (policy/priority_seats.h), and clears the busy bits that no live process will clear: a
// connection's that closed, or whose process is checkpointed (its CUDA calls block until its
// restore, so its shim's sentinel cannot). Single-threaded: the daemon's event loop.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "gshare/priority_board.h"
#include "policy/priority_seats.h"

namespace gshare {

class PriorityLanes {
 public:
  PriorityLanes() = default;
  ~PriorityLanes();
  PriorityLanes(const PriorityLanes&) = delete;
  PriorityLanes& operator=(const PriorityLanes&) = delete;

  // Creates the board at `path` (mode 0600, zeroed) and maps it. On error the lanes stay off:
  // no seats are given, and the lease alone orders jobs of different priorities.
  Status Open(const std::string& path);
  bool on() const { return board_ != nullptr; }
  const std::string& path() const { return path_; }

  // `conn` (a job of `priority`) asks for `gpu`: it takes a seat there. Nothing when the
  // lanes are off, all slots or seats are taken, or it has one.
  void Sit(const GpuKey& gpu, ConnId conn, int priority);
  // `conn` closed: its seats are freed and their bits cleared.
  void Leave(ConnId conn);
  void SetPriority(ConnId conn, int priority);
  // `conn`'s process cannot clear its own bits (checkpointed): they are cleared now.
  void Quiet(ConnId conn);

  // A kBoardSeat message to send (protocol.h): the fields of its LeaseMsg.
  struct Message {
    ConnId conn;
    GpuKey gpu;
    uint32_t slot;
    uint32_t seat_plus_one;  // 0: no seat
    uint64_t yield_mask;
    bool watched;
    uint32_t yielders;
  };
  // What changed since the last call (PrioritySeats::TakeChanges).
  std::vector<Message> TakeMessages();

  // Status of `gpu`: per seated connection its seat, priority, whether it is busy now and
  // which seats it yields to. Null when nothing is seated there.
  nlohmann::json Json(const GpuKey& gpu) const;
  // The busy bits of `gpu` now.
  uint64_t BusyMask(const GpuKey& gpu) const;
  // Whether some busy bit is set now (a few loads: the event loop asks it at each turn).
  bool AnyBusy() const;
  // The connections whose busy bit is set now, on any GPU.
  std::vector<ConnId> BusyConns() const;

 private:
  void Clear(int slot, int seat);

  std::string path_;
  proto::BoardSlot* board_ = nullptr;
  std::map<GpuKey, int> slots_;
  PrioritySeats seats_;
};

}  // namespace gshare
