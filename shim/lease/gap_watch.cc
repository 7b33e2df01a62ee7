// Gap watch: idle-gap reports and gap stretches for phase staggering (gap_watch.h).
#include "lease/gap_watch.h"

#include <pthread.h>
#include <time.h>

#include <algorithm>

#include "lease/lease_state.h"
#include "memory/mono_clock.h"

namespace gshare::shim {

std::atomic<uint64_t> g_gap_watch{0};
std::atomic<uint64_t> g_stretch_due{0};

namespace {

// When the latest synchronizing call returned while watched; 0 once a gap claimed it.
std::atomic<int64_t> g_gap_begin_ns{0};

constexpr int64_t kMaxStretchMs = 60'000;

uint64_t Bit(int device) { return uint64_t{1} << device; }

}  // namespace

using lease::Dev;
using lease::g_gates;
using lease::g_mu;

void GapBegins() {
  int64_t now = MonoNowNs();
  uint64_t watch = g_gap_watch.load(std::memory_order_relaxed);
  if (watch != 0) {
    g_gap_begin_ns.store(now, std::memory_order_relaxed);
    // The next submission on each watched device takes MarkActive's first-submission branch.
    for (uint64_t m = watch; m != 0; m &= m - 1) g_gates[__builtin_ctzll(m)].ClearActive();
  }
  if (g_stretch_due.load(std::memory_order_relaxed) == 0) return;
  g_mu.Lock();
  uint64_t due = g_stretch_due.exchange(0, std::memory_order_relaxed);
  for (uint64_t m = due; m != 0; m &= m - 1) {
    int i = __builtin_ctzll(m);
    lease::DeviceState& d = Dev(i);
    if (!d.holding || d.dropping || d.stretched) continue;
    d.stretched = true;
    d.stretch_until_ns = now + d.stretch_ms.load(std::memory_order_relaxed) * 1'000'000;
    g_gates[i].Close();
  }
  g_mu.Unlock();
}

void GapEnds(int device) {
  if (((g_gap_watch.load(std::memory_order_relaxed) >> device) & 1) == 0) return;
  if (g_gap_begin_ns.load(std::memory_order_relaxed) == 0) return;
  int64_t begin = g_gap_begin_ns.exchange(0, std::memory_order_relaxed);
  int64_t end = MonoNowNs();
  if (begin == 0 || end - begin < lease::kMinGapNs) return;
  lease::DeviceState& d = Dev(device);
  d.gap_begin_ns.store(begin, std::memory_order_relaxed);
  d.gap_end_ns.store(end, std::memory_order_release);
}

namespace lease {

void SendGap(int device) {
  DeviceState& d = Dev(device);
  if (!d.watching) return;
  int64_t end = d.gap_end_ns.load(std::memory_order_acquire);
  if (end == 0 || end == d.gap_sent_ns) return;
  d.gap_sent_ns = end;
  proto::GapMsg m{};
  m.gpu = d.uuid;
  m.begin_ns = d.gap_begin_ns.load(std::memory_order_relaxed);
  m.end_ns = end;
  m.ordinal = device;
  g_socket.SendFrame(g_socket.fd(), proto::MsgType::kGapReport, &m, sizeof m);
}

void HandleGapWatch(const proto::LeaseMsg& m) {
  g_mu.Lock();
  int device = DeviceOfUuid(m.gpu);
  if (device >= 0) {
    DeviceState& d = Dev(device);
    if (m.bytes != 0 && d.holding && !d.dropping) {
      d.watching = true;
      d.gap_sent_ns = d.gap_end_ns.load(std::memory_order_relaxed);  // nothing stale
      g_gap_begin_ns.store(0, std::memory_order_relaxed);  // nor a begin from an earlier watch
      g_gap_watch.fetch_or(Bit(device), std::memory_order_relaxed);
    } else {
      StopGapWatch(device);
    }
  }
  g_mu.Unlock();
}

void HandleStretch(const proto::LeaseMsg& m) {
  g_mu.Lock();
  int device = DeviceOfUuid(m.gpu);
  if (device >= 0) {
    DeviceState& d = Dev(device);
    if (d.holding && !d.dropping && d.watching) {
      d.stretch_ms.store(std::min<int64_t>(static_cast<int64_t>(m.bytes), kMaxStretchMs),
                         std::memory_order_relaxed);
      g_stretch_due.fetch_or(Bit(device), std::memory_order_relaxed);
    }
  }
  g_mu.Unlock();
}

void ResetGapWatchAfterFork() {
  g_gap_watch.store(0, std::memory_order_relaxed);
  g_stretch_due.store(0, std::memory_order_relaxed);
  g_gap_begin_ns.store(0, std::memory_order_relaxed);
}

void StopGapWatch(int device) {
  DeviceState& d = Dev(device);
  d.watching = false;
  g_gap_watch.fetch_and(~Bit(device), std::memory_order_relaxed);
  g_stretch_due.fetch_and(~Bit(device), std::memory_order_relaxed);
  if (d.stretched && d.holding && !d.dropping) g_gates[device].Open();
  d.stretched = false;
  d.stretch_until_ns = 0;
  pthread_cond_broadcast(&g_cv);
}

bool WaitStretch(int device) {
  DeviceState& d = Dev(device);
  if (!d.stretched || !d.holding || d.dropping) return false;
  int64_t left = d.stretch_until_ns - MonoNowNs();
  if (left <= 0) {
    d.stretched = false;
    g_gates[device].Open();
    return true;
  }
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);  // the condition variable's clock
  int64_t ns = ts.tv_nsec + left;
  ts.tv_sec += ns / 1'000'000'000;
  ts.tv_nsec = ns % 1'000'000'000;
  pthread_cond_timedwait(&g_cv, g_mu.native(), &ts);
  return true;
}

}  // namespace lease
}  // namespace gshare::shim
