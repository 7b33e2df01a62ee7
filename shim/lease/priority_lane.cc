// The priority lanes: the board's mapping, the yielding wait, the busy mark and the sentinel
// thread that clears it (priority_lane.h).
#include "lease/priority_lane.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "driver/census.h"
#include "gshare/job_env.h"
#include "lease/lease_client.h"
#include "lease/lease_state.h"
#include "lease/mps_arrival.h"
#include "memory/mono_clock.h"
#include "shim_thread.h"

namespace gshare::shim {

Lane g_lanes[kMaxDevices];
std::atomic<uint64_t> g_lane_submits{0};
std::atomic<int> g_lanes_watched{0};

namespace {

// How long a busy process must have submitted nothing before its sentinel synchronizes it:
// longer than the gaps between launches of a CPU-bound job, shorter than the gaps between a
// service's requests.
constexpr int64_t kQuietNs = 2'000'000;

std::atomic<proto::BoardSlot*> g_board{nullptr};  // kBoardSlots slots, once mapped
std::atomic<bool> g_board_failed{false};
std::atomic<bool> g_sentinel_started{false};
std::atomic<uint32_t> g_sentinel_seq{0};  // private futex word: a lane became busy

long Futex(std::atomic<uint32_t>* word, int op, uint32_t value, const struct timespec* timeout) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Clears `bit` on `slot` (when there is one) and wakes the processes waiting for it to clear.
void ClearBit(proto::BoardSlot* slot, uint64_t bit) {
  if (slot != nullptr && bit != 0) proto::ClearBusy(*slot, bit);
}

// `l` was just set idle (from `kSettling` or `kBusy`): its bit clears and waiters wake. A
// submission between that exchange and the clear found the lane idle and set the bit before
// it was cleared: set it again (that submission's BecomeBusy woke the sentinel, which settles
// it).
void ClearIdleLane(Lane& l) {
  proto::BoardSlot* slot = l.slot.load(std::memory_order_acquire);
  const uint64_t bit = l.own_bit.load(std::memory_order_relaxed);
  const int64_t now = MonoNowNs();
  l.idle_since_ns.store(now, std::memory_order_relaxed);
  l.backlog.WentIdle(now);
  // Before the bit clears: the processes it wakes read the new forecast, and race for the
  // turns to run beside its next busy period.
  if (slot != nullptr) {
    PublishQuiet(*slot, now, l.forecast.PredictNs());
    EndBesideTurns(*slot);
  }
  ClearBit(slot, bit);
  if (l.state.load(std::memory_order_acquire) != Lane::kIdle) {
    l.backlog.Retract();
    if (slot != nullptr) slot->busy.fetch_or(bit, std::memory_order_acq_rel);
  }
}

// The census's record of a backlog mark or clear of `l` at `now`; `span_ns` as
// BehindEventView::since_real_us.
void LogBehindEvent(const Lane& l, char kind, int64_t now, int64_t span_ns) {
  BehindEventView e;
  e.kind = kind;
  e.at_us = now / 1000;
  e.usual_gap_us = l.backlog.UsualGapNs() / 1000;
  e.usual_period_us = l.backlog.UsualPeriodNs() / 1000;
  e.since_real_us = span_ns / 1000;
  e.forecast_us = l.forecast.PredictNs() / 1000;
  int64_t gaps[4];
  l.forecast.LastGaps(gaps, 4);
  for (int i = 0; i < 4; ++i) e.last_gaps_us[i] = gaps[i] / 1000;
  CensusBehindEvent(e);
}

// Marks on the board whether `l`'s job is behind its arrivals (BacklogWatch) at `now`
// (CLOCK_MONOTONIC ns), when it changed; with the census on, counts the backlog and how long
// it lasted.
void PublishBehind(Lane& l, proto::BoardSlot* slot, bool behind, int64_t now) {
  const uint64_t bit = l.own_bit.load(std::memory_order_relaxed);
  if (slot == nullptr || bit == 0) return;
  const bool marked = (slot->behind_seats.load(std::memory_order_relaxed) & bit) != 0;
  if (behind && !marked) {
    slot->behind_seats.fetch_or(bit, std::memory_order_acq_rel);
    if (g_census_on) {
      g_census_behind.fetch_add(1, std::memory_order_relaxed);
      int64_t none = 0;
      l.behind_marked_ns.compare_exchange_strong(none, now, std::memory_order_relaxed);
      const int64_t last_real = l.backlog.LastRealNs();
      LogBehindEvent(l, 'm', now, last_real > 0 ? now - last_real : 0);
    }
  }
  if (!behind && marked) {
    slot->behind_seats.fetch_and(~bit, std::memory_order_acq_rel);
    if (g_census_on) {
      // Exchanged, so that two threads clearing at once count the backlog once.
      const int64_t since = l.behind_marked_ns.exchange(0, std::memory_order_relaxed);
      if (since > 0 && now >= since) {
        g_census_behind_ms.fetch_add(static_cast<uint64_t>((now - since) / 1'000'000),
                                     std::memory_order_relaxed);
        const bool capped = now - since >= BacklogWatch::kMaxBehindNs;
        if (capped) g_census_behind_capped.fetch_add(1, std::memory_order_relaxed);
        LogBehindEvent(l, capped ? 'x' : 'c', now, now - since);
      }
    }
  }
}

// The device's work submitted so far has completed: its bit clears, unless a submission
// came meanwhile (then the next round settles again).
void Settle(int device) {
  Lane& l = g_lanes[device];
  if (g_active_captures.load(std::memory_order_acquire) > 0) {
    // Synchronizing now would invalidate the capture: the lane stays busy until it ends.
    struct timespec ts = {0, 200 * 1000};
    nanosleep(&ts, nullptr);
    return;
  }
  uint32_t busy = Lane::kBusy;
  l.state.compare_exchange_strong(busy, Lane::kSettling, std::memory_order_acq_rel);
  // A submission marks the lane busy before its driver call: wait until the threads inside
  // the gate have queued their work, so that the synchronization covers it. One that enters
  // after this point marks the lane busy again, and this round gives up.
  while (GateOf(device).Busy()) {
    if (l.state.load(std::memory_order_acquire) != Lane::kSettling) return;
    struct timespec ts = {0, 20 * 1000};
    nanosleep(&ts, nullptr);
  }
  lease::SyncContexts(device);
  uint32_t settling = Lane::kSettling;
  if (!l.state.compare_exchange_strong(settling, Lane::kIdle, std::memory_order_acq_rel)) return;
  ClearIdleLane(l);
}

bool AnyBusy() {
  for (const Lane& l : g_lanes) {
    if (l.state.load(std::memory_order_acquire) != Lane::kIdle) return true;
  }
  return false;
}

void* SentinelThread(void*) {
  for (;;) {
    uint32_t seq = g_sentinel_seq.load(std::memory_order_acquire);
    if (!AnyBusy()) {
      Futex(&g_sentinel_seq, FUTEX_WAIT_PRIVATE, seq, nullptr);
      continue;
    }
    // The process's own synchronizing call usually clears its lane first; while it keeps
    // submitting it is busy anyway.
    const uint64_t submits = g_lane_submits.load(std::memory_order_relaxed);
    struct timespec ts = {0, kQuietNs};
    nanosleep(&ts, nullptr);
    // A job with no real gap for several of its usual periods is behind its arrivals even
    // when it stays busy throughout (its requests queued with no gap between them).
    const int64_t now = MonoNowNs();
    for (Lane& l : g_lanes) {
      if (l.state.load(std::memory_order_acquire) == Lane::kIdle) continue;
      PublishBehind(l, l.slot.load(std::memory_order_acquire), l.backlog.StillBusy(now), now);
    }
    if (g_lane_submits.load(std::memory_order_relaxed) != submits) continue;
    for (int d = 0; d < kMaxDevices; ++d) {
      if (g_lanes[d].state.load(std::memory_order_acquire) != Lane::kIdle) Settle(d);
    }
  }
  return nullptr;
}

void EnsureSentinel() {
  if (g_sentinel_started.exchange(true, std::memory_order_acq_rel)) return;
  pthread_t tid;
  if (StartShimThread(&tid, /*detached=*/true, SentinelThread, nullptr, "gs-sentinel") != 0) {
    g_sentinel_started.store(false, std::memory_order_release);
  }
}

// Maps the board at `path`: a regular file of the daemon's user (this user or root), as the
// socket beside it is, at least kBoardBytes long.
proto::BoardSlot* MapBoard(const char* path) {
  if (proto::BoardSlot* b = g_board.load(std::memory_order_acquire)) return b;
  if (g_board_failed.load(std::memory_order_relaxed)) return nullptr;
  int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  struct stat st {};
  void* p = MAP_FAILED;
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      (st.st_uid == getuid() || st.st_uid == 0) &&
      st.st_size >= static_cast<off_t>(proto::kBoardBytes)) {
    p = mmap(nullptr, proto::kBoardBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  if (fd >= 0) close(fd);
  if (p == MAP_FAILED) {
    g_board_failed.store(true, std::memory_order_relaxed);
    return nullptr;
  }
  g_board.store(static_cast<proto::BoardSlot*>(p), std::memory_order_release);
  return static_cast<proto::BoardSlot*>(p);
}

}  // namespace

bool ConcurrentLanes() {
  static const bool launched = LaunchedAsMpsClient();
  return launched && !LeftMps();
}

int BesideTurns() {
  static const int turns = ParseBesideTurns(std::getenv("GSHARE_PRIORITY_BESIDE"));
  return turns;
}

void WaitForHigher(int device) {
  bool no_turn = false;
  if (ConcurrentOn(device, &no_turn)) return;
  Lane& l = g_lanes[device];
  proto::BoardSlot* slot = l.slot.load(std::memory_order_acquire);
  if (slot == nullptr) return;
  if (!HigherBusy(device)) return;
  // Once per wait, not per look of the loop below.
  if (no_turn && g_census_on) g_census_beside_denied.fetch_add(1, std::memory_order_relaxed);
  // Counted as it goes (at each wake, at least every 10 ms), so that a long wait shows.
  int64_t counted = MonoNowNs();
  auto count = [&] {
    const int64_t now = MonoNowNs();
    l.held_ns.fetch_add(now - counted, std::memory_order_relaxed);
    counted = now;
  };
  for (int spins = 0;; ++spins) {
    uint32_t seq = slot->idle_seq.load(std::memory_order_acquire);
    // A client waits only while a seat it yields to is behind or outside MPS: once that mark
    // clears (the backlog's cap, BacklogWatch::kMaxBehindNs) it runs beside again.
    if (!HigherBusy(device) || ConcurrentOn(device)) break;
    if (spins < 256) {  // ~10-40 µs: a higher job's gap between two of its submissions
      CpuRelax();
      continue;
    }
    // The timeout bounds what a wake lost to a dying process could cost.
    struct timespec ts = {0, 10 * 1000 * 1000};
    Futex(&slot->idle_seq, FUTEX_WAIT, seq, &ts);
    count();
  }
  count();
}

void LanesSynced(uint64_t submits_before) {
  if (g_lanes_watched.load(std::memory_order_relaxed) == 0) return;
  if (g_lane_submits.load(std::memory_order_acquire) != submits_before) return;
  for (int d = 0; d < kMaxDevices; ++d) {
    Lane& l = g_lanes[d];
    if (l.state.load(std::memory_order_acquire) != Lane::kBusy || GateOf(d).Busy()) continue;
    uint32_t busy = Lane::kBusy;
    if (l.state.compare_exchange_strong(busy, Lane::kIdle, std::memory_order_acq_rel)) {
      ClearIdleLane(l);
    }
  }
}

void BecomeBusy(int device) {
  Lane& l = g_lanes[device];
  if (l.state.exchange(Lane::kBusy, std::memory_order_acq_rel) != Lane::kIdle) return;
  const int64_t idle_since = l.idle_since_ns.load(std::memory_order_relaxed);
  const int64_t now = MonoNowNs();
  proto::BoardSlot* slot = l.slot.load(std::memory_order_acquire);
  if (idle_since > 0) l.forecast.GapEnded(now - idle_since);
  // Before the busy bit: a client that sees it busy also sees whether it is behind.
  PublishBehind(l, slot, l.backlog.BecameBusy(now), now);
  if (slot != nullptr) {
    slot->busy.fetch_or(l.own_bit.load(std::memory_order_relaxed), std::memory_order_acq_rel);
  }
  g_sentinel_seq.fetch_add(1, std::memory_order_release);
  Futex(&g_sentinel_seq, FUTEX_WAKE_PRIVATE, 1, nullptr);
}

namespace lease {

void SetSeat(int device, const char* board_path, uint32_t slot, uint32_t seat_plus_one,
             uint64_t yield_mask, bool watched, uint32_t yielders) {
  Lane& l = g_lanes[device];
  proto::BoardSlot* board = MapBoard(board_path);
  const bool seated = board != nullptr && slot < proto::kBoardSlots && seat_plus_one > 0 &&
                      seat_plus_one <= proto::kBoardSeats;
  proto::BoardSlot* s = seated ? &board[slot] : nullptr;
  const uint64_t bit = seated ? uint64_t{1} << (seat_plus_one - 1) : 0;
  proto::BoardSlot* old_slot = l.slot.load(std::memory_order_acquire);
  const uint64_t old_bit = l.own_bit.load(std::memory_order_relaxed);
  if (old_slot != s || old_bit != bit) {
    l.watched.store(false, std::memory_order_relaxed);
    ClearBit(old_slot, old_bit);
    if (old_slot != nullptr) {
      old_slot->mps_seats.fetch_and(~old_bit, std::memory_order_acq_rel);
      old_slot->behind_seats.fetch_and(~old_bit, std::memory_order_acq_rel);
      old_slot->beside_seats.fetch_and(~old_bit, std::memory_order_acq_rel);
    }
    l.backlog.Reset();  // a new seat's pace is learnt anew
    l.own_bit.store(bit, std::memory_order_relaxed);
    l.slot.store(s, std::memory_order_release);
  }
  // Before the yield mask below: whoever reads this seat's yield mask finds the bit set.
  if (s != nullptr && ConcurrentLanes()) s->mps_seats.fetch_or(bit, std::memory_order_acq_rel);
  l.yielders.store(yielders > 0 ? yielders : 1, std::memory_order_relaxed);
  l.yield_mask.store(seated ? yield_mask & ~bit : 0, std::memory_order_relaxed);
  if (seated && watched) EnsureSentinel();
  const bool was_watched = l.watched.exchange(seated && watched, std::memory_order_relaxed);
  if (was_watched != (seated && watched)) {
    g_lanes_watched.fetch_add(was_watched ? -1 : 1, std::memory_order_relaxed);
  }
  // Work it queued before anyone yielded to it is still to be waited for: busy until its
  // sentinel has seen it complete.
  if (seated && watched && !was_watched) BecomeBusy(device);
}

void ClearLanes() {
  for (Lane& l : g_lanes) {
    l.yield_mask.store(0, std::memory_order_relaxed);
    l.watched.store(false, std::memory_order_relaxed);
  }
  g_lanes_watched.store(0, std::memory_order_relaxed);
}

void ResetLanesAfterFork() {
  for (Lane& l : g_lanes) {
    l.yield_mask.store(0, std::memory_order_relaxed);
    l.watched.store(false, std::memory_order_relaxed);
    l.own_bit.store(0, std::memory_order_relaxed);
    l.slot.store(nullptr, std::memory_order_relaxed);
    l.state.store(Lane::kIdle, std::memory_order_relaxed);
    l.held_ns.store(0, std::memory_order_relaxed);
    l.idle_since_ns.store(0, std::memory_order_relaxed);
    l.forecast.Reset();
    l.backlog.Reset();
    l.behind_marked_ns.store(0, std::memory_order_relaxed);
  }
  g_lanes_watched.store(0, std::memory_order_relaxed);
  g_sentinel_started.store(false, std::memory_order_relaxed);  // the child has no sentinel
}

}  // namespace lease
}  // namespace gshare::shim
