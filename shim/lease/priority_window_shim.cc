// PriorityWindow (priority_window.h): the shim's one PriorityWindows, over its priority lanes
// (priority_lane.h), the SM partition (sm_partition.h) and the real driver.
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "driver/census.h"
#include "lease/lease_state.h"
#include "lease/priority_lane.h"
#include "lease/priority_window.h"
#include "lease/sm_partition.h"
#include "memory/mono_clock.h"

namespace gshare::shim {
namespace {

// Sleeps until the higher job's busy bits clear once more (the start of its next gap), at
// most until its forecast is overdue (never past 1 s).
void WaitForGapStart(int device, const QuietSpell& q) {
  Lane& l = g_lanes[device];
  proto::BoardSlot* slot = l.slot.load(std::memory_order_acquire);
  if (slot == nullptr) return;
  const uint32_t seq = slot->idle_seq.load(std::memory_order_acquire);
  int64_t wait = q.until_ns + q.gap_ns - MonoNowNs();
  if (wait <= 0) return;
  if (wait > 1'000'000'000) wait = 1'000'000'000;
  const int64_t started = MonoNowNs();
  struct timespec ts = {static_cast<time_t>(wait / 1'000'000'000),
                        static_cast<long>(wait % 1'000'000'000)};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&slot->idle_seq), FUTEX_WAIT, seq, &ts, nullptr,
          0);
  l.held_ns.fetch_add(MonoNowNs() - started, std::memory_order_relaxed);
}

// The take_beside_turn seam: TakeBesideTurnOn, a refusal counted in the census (the launch
// then waits, or takes the gap's turn on every SM).
bool TakeBesideTurnCounted(int device) {
  if (TakeBesideTurnOn(device)) return true;
  if (g_census_on) g_census_beside_denied.fetch_add(1, std::memory_order_relaxed);
  return false;
}

constexpr WindowSeams kSeams = {
    &Extras,
    &MonoNowNs,
    [](int device) { return g_lanes[device].slot.load(std::memory_order_acquire); },
    [](int device) { return g_lanes[device].yielders.load(std::memory_order_relaxed); },
    &HigherBusy,
    [](int device) { return ConcurrentOn(device); },
    &SmPartition::Possible,
    &TakeBesideTurnCounted,
    &WaitForGapStart,
};

constinit PriorityWindows g_windows(&kSeams);

}  // namespace

bool PriorityWindow::Admit(int device, uint64_t shape, CUstream stream, bool per_thread,
                           bool can_narrow, bool* waited_gap_start, bool* narrow) {
  return g_windows.Admit(device, shape, stream, per_thread, can_narrow, waited_gap_start, narrow);
}

void PriorityWindow::AfterSubmission(int device, CUstream stream, bool per_thread, uint64_t shape) {
  g_windows.AfterSubmission(device, stream, per_thread, shape);
}

void PriorityWindow::AfterNarrow(int device, CUstream stream, bool per_thread) {
  g_windows.AfterNarrow(device, stream, per_thread);
}

void PriorityWindow::ResetAfterFork() { g_windows.Reset(); }

}  // namespace gshare::shim
