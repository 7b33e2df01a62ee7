// PrioritySeats: who yields to whom on each GPU, as the priority board carries it
// (gshare/priority_board.h; docs/design.md, "Priority lanes"). Each shim connection that asks
// for a GPU gets a seat there (one bit of the GPU's board slot); its yield mask is the seats
// of strictly higher priority on that GPU, and it is watched (it marks itself busy) when some
// seat has a lower priority. Pure: the daemon sends what changed (TakeChanges) and clears the
// bits of freed seats on the board. Not thread-safe: the daemon's event loop is its only caller.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "policy/types.h"

namespace gshare {

class PrioritySeats {
 public:
  static constexpr int kSeats = 64;  // proto::kBoardSeats: the bits of a slot's busy word

  struct Seat {
    int slot = 0;  // the GPU's slot on the board
    int seat = 0;  // 0..kSeats-1
    uint64_t yield_mask = 0;
    bool watched = false;
    int yielders = 0;  // seats of the GPU that yield to some other seat (they share the window)
    bool operator==(const Seat&) const = default;
  };
  struct Change {
    ConnId conn;
    GpuKey gpu;
    std::optional<Seat> seat;  // nullopt: the connection has no seat there any more
  };
  struct Freed {
    int slot;
    int seat;
  };

  // Seats `conn` (of priority `priority`) at `gpu`, whose board slot is `slot`; nothing when
  // it has a seat there. False when all kSeats are taken (it then neither yields nor is
  // yielded to: its GPU work is ordered by the lease alone).
  bool Sit(const GpuKey& gpu, int slot, ConnId conn, int priority);
  // The connection leaves every seat it has; the seats freed (their bits must be cleared).
  std::vector<Freed> Leave(ConnId conn);
  // The connection's priority changes (a job's set-priority), on every GPU.
  void SetPriority(ConnId conn, int priority);
  // Seats whose yield mask or watch changed since the last call, and seats taken away.
  std::vector<Change> TakeChanges();
  std::optional<Seat> SeatOf(ConnId conn, const GpuKey& gpu) const;
  // Seats of `gpu` in seat order.
  struct Seated {
    ConnId conn;
    int seat;
    int priority;
  };
  std::vector<Seated> SeatedAt(const GpuKey& gpu) const;

 private:
  struct Table {
    int slot = 0;
    std::map<int, std::pair<ConnId, int>> seats;  // seat -> (connection, priority)
  };
  Seat Compute(const Table& t, int seat) const;

  std::map<GpuKey, Table> tables_;
  std::map<std::pair<ConnId, GpuKey>, Seat> sent_;  // what each connection was last told
  std::set<std::pair<ConnId, GpuKey>> dirty_;       // to compare with sent_ at TakeChanges
};

}  // namespace gshare
