// PriorityLane: the shim's side of the priority board (gshare/priority_board.h; docs/design.md,
// "Priority lanes"). Per device, what the daemon's kBoardSeat said: the seats this process
// yields to, and its own seat's bit when a lower-priority seat yields to it.
//
// - A process that yields (yield mask not 0) waits, before each submission and outside the
//   gate, while one of those seats is busy (an MPS client yielding to MPS clients only,
//   ConcurrentOn, does not wait; its window alone bounds it): it spins a few microseconds,
//   then sleeps on the slot's futex word, which the higher job's shim (or the daemon, for a
//   process that died or was checkpointed) bumps when its bit clears. Its submissions are
//   also windowed by GPU time (priority_window.h), so that what it has queued when the higher
//   job comes back is short.
// - A watched process marks its bit busy at its first submission after an idle period (one
//   exchange, one atomic OR on the board, one futex wake of its sentinel thread; then one
//   relaxed increment per submission). The bit clears when the process's own synchronizing
//   call (cuCtxSynchronize, cuStreamSynchronize, cuEventSynchronize) returns with no
//   submission made meanwhile and no thread inside the gate: the end of a request or a step.
//   A process that stops submitting without synchronizing is settled by its sentinel thread
//   after kQuietNs: cuCtxSynchronize of its contexts there, repeated until no submission came
//   meanwhile. The sentinel never synchronizes while the process submits (a synchronize from
//   another thread slows the process's launches). As it goes idle, a watched lane publishes
//   when it expects to be busy again (quiet_forecast.h), for the yielders' window; as it
//   becomes busy again, whether it has fallen behind its arrivals (backlog_watch.h).
//
// Fast path of a process that neither yields nor is watched (every job alone or at one
// priority): two relaxed loads of process-local words; no lock, no syscall. Any thread; the
// lease thread sets the lanes (SetSeat) and clears them when the daemon is lost.
#pragma once

#include <atomic>
#include <cstdint>

#include "gshare/priority_board.h"
#include "driver/context_registry.h"
#include "lease/backlog_watch.h"
#include "lease/beside_turns.h"
#include "lease/quiet_forecast.h"

namespace gshare::shim {

struct alignas(64) Lane {
  enum : uint32_t { kIdle = 0, kBusy = 1, kSettling = 2 };
  std::atomic<uint64_t> yield_mask{0};  // seats of higher priority on the device; 0: none
  std::atomic<uint64_t> own_bit{0};     // its seat's bit; 0: no seat
  std::atomic<bool> watched{false};     // a lower-priority seat yields to it: it marks busy
  std::atomic<proto::BoardSlot*> slot{nullptr};
  std::atomic<uint32_t> state{kIdle};  // kBusy from a submission; the sentinel settles it
  std::atomic<int64_t> held_ns{0};     // time its submissions waited for higher priorities
  std::atomic<uint32_t> yielders{1};   // seats of the GPU that yield (the window's share)
  // A watched lane's gaps between busy periods, published on the board as it goes idle.
  std::atomic<int64_t> idle_since_ns{0};
  QuietForecast forecast;
  BacklogWatch backlog;  // whether it fell behind its arrivals: the board's behind_seats
  std::atomic<int64_t> behind_marked_ns{0};  // when its seat was marked behind (census); 0: not
};
extern Lane g_lanes[kMaxDevices];
// Submissions of watched lanes so far (any device), and how many lanes are watched.
extern std::atomic<uint64_t> g_lane_submits;
extern std::atomic<int> g_lanes_watched;

void WaitForHigher(int device);
void BecomeBusy(int device);
// A synchronizing call of the application returned; `submits_before` was g_lane_submits when
// it began. When no watched submission came meanwhile, the busy lanes with no thread inside
// their gate are idle: their work up to the call has completed.
void LanesSynced(uint64_t submits_before);

// Before a submission on `device`, outside its gate.
inline void YieldToHigher(int device) {
  if (__builtin_expect(g_lanes[device].yield_mask.load(std::memory_order_relaxed) != 0, 0)) {
    WaitForHigher(device);
  }
}
// A submission on `device` entered the gate.
inline void MarkBusy(int device) {
  Lane& l = g_lanes[device];
  if (__builtin_expect(l.watched.load(std::memory_order_relaxed), 0)) {
    g_lane_submits.fetch_add(1, std::memory_order_relaxed);
    if (l.state.load(std::memory_order_relaxed) != Lane::kBusy) BecomeBusy(device);
  }
}
// Whether a seat this process yields to on `device` is busy now.
inline bool HigherBusy(int device) {
  const Lane& l = g_lanes[device];
  const uint64_t mask = l.yield_mask.load(std::memory_order_relaxed);
  if (mask == 0) return false;
  const proto::BoardSlot* slot = l.slot.load(std::memory_order_acquire);
  return slot != nullptr && (slot->busy.load(std::memory_order_acquire) & mask) != 0;
}
inline bool Yields(int device) {
  return g_lanes[device].yield_mask.load(std::memory_order_relaxed) != 0;
}
// Whether this process is a client of gshare's MPS server (GSHARE_MPS_CLIENT=1 with
// CUDA_MPS_PIPE_DIRECTORY set: include/gshare/job_env.h). Its kernels then run beside a busy
// higher-priority job's at a lower MPS client priority instead of waiting for its gaps: it does
// not stop while one it yields to is busy, and its window bounds what it keeps queued meanwhile
// (priority_window.h). Read once, and false from the moment the process did not join at its
// first cuInit (mps_arrival.h); any thread.
bool ConcurrentLanes();
// GSHARE_PRIORITY_BESIDE (ParseBesideTurns): how many MPS clients of a GPU run beside its busy
// higher seats at once (default 1); 0: no bound. Read once; any thread.
int BesideTurns();

// Whether this process may queue work beside the busy higher seats of `device`, taking one
// of the turns if it holds none and one is free: GSHARE_PRIORITY_BESIDE=0 (no bound), or it
// holds one now. A relaxed load while it holds one; any thread.
inline bool TakeBesideTurnOn(int device) {
  const int turns = BesideTurns();
  if (turns == 0) return true;
  const Lane& l = g_lanes[device];
  proto::BoardSlot* slot = l.slot.load(std::memory_order_acquire);
  return slot == nullptr || TakeBesideTurn(*slot, l.own_bit.load(std::memory_order_relaxed), turns);
}

// Whether this process runs beside the busy seats it yields to on `device`: it is an MPS
// client (ConcurrentLanes), so is every seat it yields to (the board's mps_seats), and none of
// them has fallen behind its arrivals (behind_seats). A higher job outside MPS (GSHARE_MPS=0,
// another user's, a checkpoint-engine job) is time-sliced with the server's clients, and a
// client that ran beside it would take its time slices; one that fell behind needs every SM
// until it has caught up. Beside either a client waits for its gaps as a process outside MPS
// does. Three relaxed loads; any thread.
//
// With N beside turns (BesideTurns: GSHARE_PRIORITY_BESIDE, default 1; 0: no bound), while a
// seat it yields to is busy it runs beside it only holding one of the GPU's N turns
// (beside_turns.h); one load more while it holds one. False for want of a turn alone sets
// `*no_turn` (when given).
inline bool ConcurrentOn(int device, bool* no_turn = nullptr) {
  if (!ConcurrentLanes()) return false;
  const Lane& l = g_lanes[device];
  const uint64_t mask = l.yield_mask.load(std::memory_order_relaxed);
  const proto::BoardSlot* slot = l.slot.load(std::memory_order_acquire);
  if (slot == nullptr) return true;
  if ((mask & ~slot->mps_seats.load(std::memory_order_relaxed)) != 0 ||
      (mask & slot->behind_seats.load(std::memory_order_relaxed)) != 0) {
    return false;
  }
  if (BesideTurns() == 0 || (slot->busy.load(std::memory_order_acquire) & mask) == 0) return true;
  if (TakeBesideTurnOn(device)) return true;
  if (no_turn != nullptr) *no_turn = true;
  return false;
}

namespace lease {

// kBoardSeat for `device` (the lease thread). Maps the board on first use (`board_path`,
// trusted as the socket is: the daemon's user or root); a board that cannot be mapped leaves
// the lanes off (the lease alone orders the jobs).
void SetSeat(int device, const char* board_path, uint32_t slot, uint32_t seat_plus_one,
             uint64_t yield_mask, bool watched, uint32_t yielders);
// The daemon is gone (the job runs ungated): no lane waits or marks any more.
void ClearLanes();
// In a forked child (async-signal-safe: atomic stores only).
void ResetLanesAfterFork();

}  // namespace lease
}  // namespace gshare::shim
