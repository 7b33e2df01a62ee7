// The priority board: shared memory through which the shims of the jobs on one GPU keep its
// priorities between lease messages, within microseconds (docs/design.md, "Priority lanes").
// The daemon creates it beside its socket (`<socket>` + kBoardSuffix, the socket's owner and
// mode), with one slot per GPU it knows; every shim maps it. Each shim connection on a GPU gets
// a seat there (kBoardSeat): bit `seat` of the slot's `busy` word is its own. A connection
// that a lower-priority one yields to sets its bit while it has GPU work queued or running,
// and clears it when that work is done; a connection whose yield mask (the seats of higher
// priority on that GPU) meets `busy` submits nothing until those bits clear. Every field is a
// lock-free atomic (address-free, so valid across processes); any thread of any process.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>

namespace gshare::proto {

inline constexpr uint32_t kBoardSlots = 256;  // GPUs (JobTable::kMaxGpus)
inline constexpr uint32_t kBoardSeats = 64;   // seated connections per GPU: the bits of `busy`
inline constexpr const char* kBoardSuffix = ".board";

struct alignas(64) BoardSlot {
  std::atomic<uint64_t> busy;  // bit s: the connection in seat s has work queued or running
  // Futex word (FUTEX_WAIT without FUTEX_PRIVATE_FLAG, the mapping being shared): incremented
  // after bits of `busy` are cleared, so that waiters sleep on it instead of spinning.
  std::atomic<uint32_t> idle_seq;
  // The idle_seq of the last gap whose start a yielding process took for a submission longer
  // than its share of any gap (one per gap: shim/lease/priority_window.h). Compare-and-swap.
  std::atomic<uint32_t> gap_turn;
  // When a watched seat that went idle is expected to submit again (CLOCK_MONOTONIC ns, the
  // earliest of those seats) and the gap it forecast (ns); 0: no forecast. Written by the
  // watched shims before their bit clears, read by the yielding ones (shim/lease/quiet_forecast.h).
  std::atomic<int64_t> quiet_until_ns;
  std::atomic<int64_t> quiet_gap_ns;
  // Bit s: the connection in seat s is a client of gshare's MPS server on this GPU, set by its
  // own shim when seated and cleared with its seat (by the shim, or by the daemon for a seat
  // freed). A yielding client runs beside a busy higher seat only when every seat it yields to
  // has this bit: the kernels of a higher job outside MPS (isolation, another user's job) are
  // time-sliced with the server's, so there it waits for that job's gaps as any yielder does.
  std::atomic<uint64_t> mps_seats;
  // Bit s: the job in seat s has fallen behind its arrivals (its gaps far shorter than usual:
  // shim/lease/backlog_watch.h), set and cleared by its own shim, cleared with its seat. The
  // clients that run beside it wait for its gaps instead until the bit clears.
  std::atomic<uint64_t> behind_seats;
  // Bit s: the MPS client in seat s holds one of the GPU's turns to run beside busy higher
  // seats (GSHARE_PRIORITY_BESIDE bounds how many do at once: shim/lease/beside_turns.h). Taken
  // by the client's own shim with a compare-and-swap; all cleared by a watched seat's shim as
  // it goes idle (the turns last one busy period), a seat's bit by whoever frees the seat.
  std::atomic<uint64_t> beside_seats;
};
static_assert(sizeof(BoardSlot) == 64);
static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<uint32_t>::is_always_lock_free);
static_assert(std::atomic<int64_t>::is_always_lock_free);

inline constexpr size_t kBoardBytes = kBoardSlots * sizeof(BoardSlot);  // 16 KiB

// Clears `bits` of `slot`'s busy word; when one was set, bumps idle_seq and wakes every process
// sleeping on it. The shim (its own bit) and the daemon (a process that cannot) both call it.
inline void ClearBusy(BoardSlot& slot, uint64_t bits) {
  if ((slot.busy.fetch_and(~bits, std::memory_order_acq_rel) & bits) == 0) return;
  slot.idle_seq.fetch_add(1, std::memory_order_release);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&slot.idle_seq), FUTEX_WAKE, INT_MAX, nullptr,
          nullptr, 0);
}

}  // namespace gshare::proto
