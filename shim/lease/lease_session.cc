// The lease decisions and the release protocol (lease_session.h). Everything outside the
// per-device state goes through the seams, so this file links into the unit tests alone.
#include "lease/lease_session.h"

#include <cstdio>
#include <cstring>

namespace gshare::shim::lease {

constinit Mutex g_mu;
pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;

int LeaseSession::DeviceOf(const proto::GpuUuid& u) {
  for (int i = 0; i < kMaxDevices; ++i) {
    if (dev_[i].uuid_known && std::memcmp(dev_[i].uuid.bytes, u.bytes, 16) == 0) return i;
  }
  return -1;
}

void LeaseSession::EnsureUuid(int device) {
  DeviceState& d = dev_[device];
  if (!d.uuid_known) d.uuid_known = shim_.DeviceUuid(device, &d.uuid);
}

void LeaseSession::Enter(int device) {
  DeviceGate& gate = gates_[device];
  g_mu.Lock();
  link_.Start();
  DeviceState& d = dev_[device];
  ++d.waiters;
  while (!gate.TryEnter()) {
    if (ungated_) {
      gate.Open();
      continue;
    }
    if (shim_.WaitStretch(device)) continue;
    if (!d.requested && !d.holding && !d.dropping) {
      const int64_t now = clock_.NowMs();
      if (d.gap_open) {
        d.gaps.Observe(now - d.last_active_ms);  // the gap an idle release began ended
        d.gap_open = false;
      }
      EnsureUuid(device);
      d.requested = link_.RequestLease(device);
      d.requested_ms = now;
      if (!d.requested) {
        GoUngated("lost the connection to the gshare daemon at");
        continue;
      }
    }
    shim_.WaitForChange();
  }
  --d.waiters;
  g_mu.Unlock();
}

void LeaseSession::GoUngated(const char* why) {
  link_.Disconnect();
  ungated_ = true;
  shim_.WentUngated();
  for (int i = 0; i < kMaxDevices; ++i) {
    dev_[i].ForgetLease();
    shim_.Memory().RunAlone(i);
    gates_[i].Open();
  }
  if (!warned_) {
    warned_ = true;
    char line[256];
    std::snprintf(line, sizeof line, "%s %s; the job runs without GPU sharing", why, link_.Where());
    shim_.Warn(line);
  }
  pthread_cond_broadcast(&g_cv);
}

void LeaseSession::Regate() {
  for (int i = 0; i < kMaxDevices; ++i) gates_[i].CloseAndDrain();
  for (int i = 0; i < kMaxDevices; ++i) {
    shim_.SyncContexts(i);
    shim_.Memory().Stopped(i, proto::ReleaseReason::kIdle);
  }
  shim_.Warn("reconnected to the gshare daemon; GPU sharing resumed");
  MutexLock lock(g_mu);
  for (int i = 0; i < kMaxDevices; ++i) {
    DeviceState& d = dev_[i];
    d.bytes_dirty.store(d.uuid_known || d.bytes.load(std::memory_order_relaxed) != 0,
                        std::memory_order_relaxed);
  }
  pthread_cond_broadcast(&g_cv);
}

bool LeaseSession::WaitNoticeDue(int device, int64_t now_ms) {
  const DeviceState& d = dev_[device];
  if (wait_said_ || !d.requested || d.holding || d.waiters == 0 ||
      now_ms - d.requested_ms < kWaitNoticeMs) {
    return false;
  }
  wait_said_ = true;
  return true;
}

void LeaseSession::ResetAfterFork() {
  ungated_ = false;
  for (int i = 0; i < kMaxDevices; ++i) {
    DeviceState& d = dev_[i];
    d.ForgetLease();
    d.waiters = 0;
    d.gaps.Reset();
    d.handoff_ms = -1;
    d.gap_open = false;
    d.epoch = 0;
    d.watching = d.stretched = false;
    d.stretch_until_ns = 0;
    d.bytes.store(0, std::memory_order_relaxed);
    d.bytes_dirty.store(false, std::memory_order_relaxed);
    d.held_sent_ns = 0;
    gates_[i].Reset();
  }
}

void LeaseSession::Tick() {
  const TickView tick = BeginTick();
  for (int i = 0; i < kMaxDevices; ++i) {
    g_mu.Lock();
    DeviceState& d = dev_[i];
    proto::ReleaseReason reason;
    const bool release = DecideRelease(i, tick, &reason);
    // A process that cannot run says so once, so that a foreground job that seems stuck says
    // why (`gshare run -q` silences it).
    if (WaitNoticeDue(i, tick.now_ms)) {
      char line[192];
      std::snprintf(line, sizeof line,
                    "job %llu waits for its turn on the GPU (device %d): another job holds it; "
                    "`gshare status` shows which",
                    static_cast<unsigned long long>(link_.JobId()), i);
      shim_.Warn(line);
    }
    shim_.SendGap(i);
    if (const int64_t held = shim_.HeldNs(i); held - d.held_sent_ns >= kHeldReportNs) {
      d.held_sent_ns = held;
      d.bytes_dirty.store(true, std::memory_order_relaxed);
    }
    // A report due while no connection is up is dropped: a reconnection marks every known
    // device's report due again.
    if (d.bytes_dirty.exchange(false, std::memory_order_relaxed) && link_.Connected()) {
      EnsureUuid(i);
      if (d.uuid_known) link_.SendReport(i);
    }
    g_mu.Unlock();
    if (release) Release(i, reason);
  }
}

LeaseSession::TickView LeaseSession::BeginTick() {
  TickView t;
  t.now_ms = clock_.NowMs();
  t.since_tick_ms = last_tick_ms_ == 0 ? 0 : t.now_ms - last_tick_ms_;
  last_tick_ms_ = t.now_ms;
  t.capturing = shim_.Capturing();
  t.waited = shim_.TakeGpuWaited();
  return t;
}

bool LeaseSession::DecideRelease(int device, const TickView& tick, proto::ReleaseReason* reason) {
  DeviceState& d = dev_[device];
  DeviceGate& gate = gates_[device];
  bool release = false;
  *reason = proto::ReleaseReason::kDropped;
  if (d.holding && !d.dropping && !tick.capturing) {
    int64_t idle = tick.now_ms - d.last_active_ms;
    if (d.drop_deferred) {
      release = true;
    } else if (gate.TakeActive() || gate.Busy() || tick.waited) {
      d.gaps.Observe(idle);  // a gap (if it was one) ended
      d.Active(tick.now_ms);
    } else {
      // A pinning in progress needs no guard here: a handoff that would evict into host
      // memory not pinned yet is unpriced (kNever), so the idle release waits
      // kUnpricedIdleMs and the early release is off; a priced one finds its room pinned.
      if (shim_.Memory().Pinning()) d.registering_ms += tick.since_tick_ms;
      if (d.waiters == 0 && idle >= GapPredictor::IdleReleaseMs(idle_release_ms_, d.handoff_ms)) {
        release = true;
        *reason = proto::ReleaseReason::kIdle;
      } else if (d.waiters == 0 && early_release_ && d.handoff_ms >= 0 &&
                 d.gaps.WorthReleasing(idle - d.registering_ms, d.handoff_ms)) {
        release = true;  // another job waits and this gap should outlast both handoffs
        *reason = proto::ReleaseReason::kEarly;
      }
    }
  }
  if (release) {
    d.dropping = true;
    d.gap_open = *reason != proto::ReleaseReason::kDropped;
  }
  return release;
}

void LeaseSession::Granted(int device, uint64_t epoch, uint64_t others_fixed) {
  DeviceState& d = dev_[device];
  // A new grant starts uncontended until the daemon says someone waits.
  if (!d.holding || d.epoch != epoch) {
    shim_.SetContended(device, false);
    d.handoff_ms = -1;
  }
  d.requested = false;
  d.holding = true;
  d.epoch = epoch;
  d.Active(clock_.NowMs());
  d.others_fixed.store(others_fixed, std::memory_order_relaxed);
}

void LeaseSession::OpenAfterGrant(int device, uint64_t epoch) {
  DeviceState& d = dev_[device];
  if (d.holding && !d.dropping && d.epoch == epoch) {
    // The idle clock starts when work can go out: a swap-in may take longer than
    // idle_release, with the job's threads blocked in the engine (allocating), not at the gate.
    d.Active(clock_.NowMs());
    gates_[device].Open();
  }
}

void LeaseSession::OnDrop(const proto::LeaseMsg& m) {
  g_mu.Lock();
  int device = DeviceOf(m.gpu);
  if (device < 0) {
    g_mu.Unlock();
    return;
  }
  DeviceState& d = dev_[device];
  if (!d.holding || d.dropping || m.epoch != d.epoch) {
    // Already released (an idle release crossed this DROP) or a stale epoch: acknowledge
    // so the daemon never waits on us; it ignores acknowledgements it does not expect.
    link_.SendLease(proto::MsgType::kLeaseReleased, device, m.epoch,
                    static_cast<uint32_t>(proto::ReleaseReason::kDropped));
    g_mu.Unlock();
    return;
  }
  if (shim_.Capturing()) {
    d.drop_deferred = true;  // synchronizing now would invalidate the capture
    g_mu.Unlock();
    return;
  }
  d.dropping = true;
  g_mu.Unlock();
  Release(device, proto::ReleaseReason::kDropped);
}

void LeaseSession::OnContended(const proto::LeaseMsg& m) {
  g_mu.Lock();
  int device = DeviceOf(m.gpu);
  if (device >= 0 && dev_[device].holding && dev_[device].epoch == m.epoch) {
    shim_.SetContended(device, true);
    dev_[device].handoff_ms = GapPredictor::HandoffMs(m.bytes);
  }
  g_mu.Unlock();
}

void LeaseSession::Release(int device, proto::ReleaseReason reason) {
  // A checkpoint-engine process whose interpreter is shutting down says so: the daemon then
  // leaves its memory to go with the process instead of checkpointing it (interpreter_exit.h).
  if (reason != proto::ReleaseReason::kExit && shim_.Finalizing()) {
    reason = proto::ReleaseReason::kExit;
  }
  // The slow part runs without g_mu, so submitting threads can queue up on g_cv meanwhile.
  gates_[device].CloseAndDrain();
  shim_.SyncContexts(device);
  shim_.Memory().Stopped(device, reason);
  bool exiting = reason == proto::ReleaseReason::kExit;
  g_mu.Lock();
  DeviceState& d = dev_[device];
  if (exiting && d.uuid_known) link_.SendReport(device);  // before the release
  d.holding = false;
  d.dropping = false;
  d.drop_deferred = false;
  d.handoff_ms = -1;
  shim_.StopGapWatch(device);
  shim_.SetContended(device, false);
  link_.SendLease(proto::MsgType::kLeaseReleased, device, d.epoch, static_cast<uint32_t>(reason));
  if (d.waiters > 0) d.requested = link_.RequestLease(device);
  g_mu.Unlock();
}

}  // namespace gshare::shim::lease
