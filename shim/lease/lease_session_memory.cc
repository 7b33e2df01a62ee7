// The memory engine with the lease: GRANT, EVICT and SWAP_STAGE (lease_session.h). Through the
// seams only, so this file links into the unit tests alone.
#include "lease/lease_session.h"

namespace gshare::shim::lease {

void LeaseSession::OnGrant(const proto::LeaseMsg& m) {
  g_mu.Lock();
  const int device = DeviceOf(m.gpu);
  if (device < 0) {
    g_mu.Unlock();
    return;
  }
  DeviceState& d = dev_[device];
  Granted(device, m.epoch, m.bytes);
  MemoryEngine& engine = shim_.Memory();
  const bool back = !d.dropping && engine.WantsBack(device);
  g_mu.Unlock();
  if (back) {
    // The job's memory comes back before its first submission (docs/memory.md, "How `swap`
    // works": swap-in at the grant, before the gate opens).
    MemoryEngine::BackStats back_stats;
    const bool ok = engine.Back(device, &back_stats);
    SwapInNote note;
    note.bytes = back_stats.moved;
    note.ns = back_stats.ns;
    note.room_wait_ns = back_stats.room_wait_ns;
    note.flags = proto::kReportAfterSwapIn | (ok ? 0 : proto::kReportSwapInFailed);
    note.epoch = m.epoch;
    link_.SendSwapInReport(device, note);
    if (!ok) {
      // It cannot run without its memory: give the lease back, ask again a moment later.
      clock_.SleepMs(kRetryAfterFailedSwapInMs);
      g_mu.Lock();
      d.dropping = true;
      g_mu.Unlock();
      Release(device, proto::ReleaseReason::kDropped);
      return;
    }
  }
  g_mu.Lock();
  OpenAfterGrant(device, m.epoch);
  pthread_cond_broadcast(&g_cv);
  g_mu.Unlock();
}

void LeaseSession::OnEvict(const proto::LeaseMsg& m) {
  g_mu.Lock();
  const int device = DeviceOf(m.gpu);
  const bool stopped = device >= 0 && !dev_[device].holding && !dev_[device].dropping;
  g_mu.Unlock();
  if (device < 0) return;
  if (stopped) shim_.Memory().Evict(device, m.bytes);
  link_.SendReport(device);  // always answered: the daemon's ledger is then current
}

void LeaseSession::OnStage(const proto::LeaseMsg& m) {
  g_mu.Lock();
  const int device = DeviceOf(m.gpu);
  const bool idle = device >= 0 && !dev_[device].holding && !dev_[device].requested;
  g_mu.Unlock();
  if (device >= 0 && (idle || m.bytes == 0)) shim_.Memory().Stage(device, m.bytes);
}

}  // namespace gshare::shim::lease
