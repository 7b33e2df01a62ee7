// LeaseSession: the lease decisions of this process, apart from its socket and thread: the
// per-device lease state, when a holder gives the lease back (idle, early, a deferred DROP),
// what a GRANT, DROP or CONTENDED does to that state, and the release protocol (close the
// gate, drain, synchronize, acknowledge). It reaches the clock, the daemon and the driver only
// through its seams (lease_seams.h). Called by the lease client thread, except where a method
// says otherwise; methods marked REQUIRES(g_mu) want the caller to hold the lease lock, those
// marked EXCLUDES(g_mu) take it themselves.
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "gshare/protocol.h"
#include "driver/context_registry.h"
#include "lease/device_gate.h"
#include "lease/gap_predictor.h"
#include "lease/lease_seams.h"
#include "mutex.h"

namespace gshare::shim::lease {

namespace proto = gshare::proto;

// The atomics need no lock. uuid_known and uuid are set once, under g_mu (EnsureUuid), and
// never change after: they are read without g_mu too.
struct DeviceState {
  bool requested GUARDED_BY(g_mu) = false;      // a request is outstanding
  bool holding GUARDED_BY(g_mu) = false;        // the daemon granted the lease (gate may be open)
  bool dropping GUARDED_BY(g_mu) = false;       // a release is in progress
  bool drop_deferred GUARDED_BY(g_mu) = false;  // DROP arrived during a stream capture
  // No lease, none asked for, none being given back (no daemon, or a forked child's start).
  void ForgetLease() REQUIRES(g_mu) { requested = holding = dropping = drop_deferred = false; }
  bool uuid_known = false;
  int waiters GUARDED_BY(g_mu) = 0;     // threads blocked in EnterSlow
  uint64_t epoch GUARDED_BY(g_mu) = 0;  // epoch of the current grant
  int64_t last_active_ms GUARDED_BY(g_mu) = 0;
  int64_t requested_ms GUARDED_BY(g_mu) = 0;  // when the outstanding request went out
  // Of the idle time since last_active_ms, what the host pool spent registering memory
  // (host_pool.h: it holds up the process's other driver calls, so the job may have been
  // blocked, not idle). Only the early release leaves it out.
  int64_t registering_ms GUARDED_BY(g_mu) = 0;
  void Active(int64_t now_ms) REQUIRES(g_mu) {
    last_active_ms = now_ms;
    registering_ms = 0;
  }
  // Early release (gap_predictor.h): the job's idle gaps so far; the cost of one handoff to
  // the waiting job, from the daemon's CONTENDED (-1: nobody waits); an idle release whose
  // gap has not ended yet (the next submission ends it).
  GapPredictor gaps GUARDED_BY(g_mu);
  int64_t handoff_ms GUARDED_BY(g_mu) = -1;
  bool gap_open GUARDED_BY(g_mu) = false;
  proto::GpuUuid uuid{};
  // Gap watch (gap_watch.h): the latest gap GapEnds published and the last one sent
  // (CLOCK_MONOTONIC ns); a stretch ordered, and one holding the gate until stretch_until_ns.
  bool watching GUARDED_BY(g_mu) = false;
  std::atomic<int64_t> gap_begin_ns{0};
  std::atomic<int64_t> gap_end_ns{0};
  int64_t gap_sent_ns GUARDED_BY(g_mu) = 0;
  std::atomic<int64_t> stretch_ms{0};
  bool stretched GUARDED_BY(g_mu) = false;
  int64_t stretch_until_ns GUARDED_BY(g_mu) = 0;
  std::atomic<int64_t> bytes{0};              // allocated past the swap engine
  std::atomic<bool> bytes_dirty{false};       // a memory report is due
  int64_t held_sent_ns GUARDED_BY(g_mu) = 0;  // the lane's held_ns in the last report
  std::atomic<uint64_t> demand{0};
  std::atomic<uint64_t> others_fixed{0};
};

class LeaseSession {
 public:
  // `gates` is the process's array of kMaxDevices gates, one per device ordinal. The seams and
  // the gates must outlive the session (in the shim: all have static storage).
  constexpr LeaseSession(LeaseClock& clock, DaemonLink& link, ShimCalls& shim, DeviceGate* gates)
      : clock_(clock), link_(link), shim_(shim), gates_(gates) {}
  LeaseSession(const LeaseSession&) = delete;
  LeaseSession& operator=(const LeaseSession&) = delete;

  static constexpr int kDefaultIdleReleaseMs = 500;  // as configs/gshare.toml

  // The idle release after `idle_release_ms` without work (ms, > 0), and whether the early
  // release is on. Only before the lease thread starts: both are read without g_mu after.
  void Configure(int idle_release_ms, bool early_release) {
    idle_release_ms_ = idle_release_ms;
    early_release_ = early_release;
  }

  // The state of device ordinal `device` (0 <= device < kMaxDevices). Any thread; its fields
  // say which need g_mu.
  DeviceState& Dev(int device) { return dev_[device]; }
  // The ordinal whose uuid is `u`, or -1 when no known device has it.
  int DeviceOf(const proto::GpuUuid& u) REQUIRES(g_mu);
  // Learns the uuid of `device` once (the daemon names GPUs by uuid); Dev(device).uuid_known
  // says whether the driver gave one.
  void EnsureUuid(int device) REQUIRES(g_mu);

  // Slow path of a submission on `device`, its gate closed (any thread): connects on the
  // process's first call (DaemonLink::Start), asks for the lease when nothing is outstanding,
  // and waits until the gate opens; returns with the caller inside the gate (it must call
  // Exit()). While a stretch holds the gate it waits for the stretch; without a daemon the gate
  // is forced open; a request that cannot be sent makes the process ungated.
  void Enter(int device) EXCLUDES(g_mu);
  // The daemon is unreachable or gone (`why`, followed by its socket, is said once on stderr):
  // the connection is given up, every lease flag cleared, the memory engine's memory comes back
  // on every device and every gate opens; threads in Enter are woken. The job runs as if alone
  // until Reconnected.
  void GoUngated(const char* why) REQUIRES(g_mu);
  bool ungated() const REQUIRES(g_mu) { return ungated_; }
  // A new connection answers: the process is gated again (its gates are closed by Regate).
  void Reconnected() REQUIRES(g_mu) { ungated_ = false; }
  // After Reconnected: every gate closed and drained, the contexts synchronized, the engine's
  // memory marked as not running there (it stays where it is), said once on stderr, and a
  // memory report due for every device the process knows or has memory on; threads in Enter
  // are woken to ask for the lease. Lease thread, without g_mu.
  void Regate();
  // GSHARE_QUIET: `gshare run` already said whatever the process would say (unshared, waiting).
  void Quiet() REQUIRES(g_mu) { warned_ = wait_said_ = true; }
  // Whether the process should now say, once, that a submission on `device` waits for its
  // turn: a request outstanding for kWaitNoticeMs with threads waiting.
  bool WaitNoticeDue(int device, int64_t now_ms) REQUIRES(g_mu);
  // How long a submission waits for a grant before the process says so on stderr (once): longer
  // than a handoff between jobs takes (tens of ms to a few s with memory moved), shorter than a
  // person waits before wondering.
  static constexpr int64_t kWaitNoticeMs = 5000;

  // The memory engine with the lease (lease_session_memory.cc). GRANT: the lease is held and,
  // where the engine wants it, its memory comes back (swap-in, prefetch) before the gate opens,
  // followed by a report of the swap-in; when not all of it came back the process waits
  // kRetryAfterFailedSwapInMs, gives the lease back (kDropped) and asks again. EVICT: the
  // engine moves memory off a device where the process holds no lease and the daemon always
  // gets a report. SWAP_STAGE: staging while the process neither holds nor wants the lease
  // there (or stops staging, m.bytes 0). Lease thread.
  void OnGrant(const proto::LeaseMsg& m) EXCLUDES(g_mu);
  void OnEvict(const proto::LeaseMsg& m) EXCLUDES(g_mu);
  void OnStage(const proto::LeaseMsg& m) EXCLUDES(g_mu);
  static constexpr int64_t kRetryAfterFailedSwapInMs = 200;

  // In a forked child (its only thread): no lease, no waiter, no gap or stretch, none of the
  // parent's fixed bytes, every gate closed, gated again; the devices' uuids stay.
  void ResetAfterFork() NO_THREAD_SAFETY_ANALYSIS;

  // What one tick of the lease thread sees once, for every device: the time (ms), the time
  // since the previous tick (0 at the first), and the process's activity (ShimCalls).
  struct TickView {
    int64_t now_ms = 0;
    int64_t since_tick_ms = 0;
    bool capturing = false;
    bool waited = false;
  };
  // Starts a tick: reads the clock and takes the process's activity. Lease thread, without g_mu.
  TickView BeginTick();
  // One tick of the lease thread (every kTickMs): for each device, the release DecideRelease
  // picks, carried out after g_mu is given back; the notice that the job waits (once); the gap
  // watch's report; and a memory report when one is due, also when the time held back for
  // higher priorities grew by kHeldReportNs since the last. Lease thread, without g_mu.
  void Tick();
  static constexpr int64_t kTickMs = 20;
  static constexpr int64_t kHeldReportNs = 100'000'000;
  // Whether the holder of `device` gives the lease back now, and why (*reason): a DROP that
  // a stream capture deferred (kDropped), `idle_release_ms` without work (kIdle; longer when a
  // waiting job's handoff cannot be priced: GapPredictor::IdleReleaseMs), or, with a job
  // waiting and the early release on, a gap expected to outlast two handoffs (kEarly). Work
  // seen since the last tick (a submission, a thread inside the gate, a GPU wait) ends the
  // gap instead: it is recorded and the idle clock restarts. Nothing happens while a capture
  // is in progress or a release runs; no idle or early release while threads wait in
  // EnterSlow. True: the release is marked in progress (dropping) and the caller must call
  // Release(device, *reason) once it has given g_mu back.
  bool DecideRelease(int device, const TickView& tick, proto::ReleaseReason* reason) REQUIRES(g_mu);

  // GRANT `epoch` for `device`: the lease is held, the idle clock starts, and a new grant
  // starts uncontended. The gate stays closed until OpenAfterGrant.
  void Granted(int device, uint64_t epoch, uint64_t others_fixed) REQUIRES(g_mu);
  // Opens the gate of `device` if grant `epoch` still holds and no release began meanwhile;
  // the idle clock restarts there. The caller wakes the waiters (g_cv).
  void OpenAfterGrant(int device, uint64_t epoch) REQUIRES(g_mu);
  // DROP: releases the lease of grant m.epoch now, or at the next tick when a capture is in
  // progress. A DROP for a grant no longer held (a stale epoch, or crossed by a release) is
  // only acknowledged, with its own epoch: the daemon then never waits on this process.
  void OnDrop(const proto::LeaseMsg& m) EXCLUDES(g_mu);
  // CONTENDED: another job waits for the GPU of grant m.epoch; m.bytes prices one handoff
  // (GapPredictor::HandoffMs). Ignored for a grant no longer held.
  void OnContended(const proto::LeaseMsg& m) EXCLUDES(g_mu);
  // The release protocol, with Dev(device).dropping already set: closes and drains the gate,
  // synchronizes the contexts, stops the memory engines there, then (under g_mu) clears the
  // holding state and acknowledges with the grant's epoch and `reason`, and asks again at
  // once if threads wait in EnterSlow. Lease thread, or the exit handler.
  void Release(int device, proto::ReleaseReason reason) EXCLUDES(g_mu);

 private:
  LeaseClock& clock_;
  DaemonLink& link_;
  ShimCalls& shim_;
  DeviceGate* gates_;
  int idle_release_ms_ = kDefaultIdleReleaseMs;  // gshare run passes the config's
  bool early_release_ = true;  // [scheduler] early_release (GSHARE_EARLY_RELEASE=0: off)
  int64_t last_tick_ms_ = 0;   // BeginTick's previous clock reading; lease thread only
  bool ungated_ GUARDED_BY(g_mu) = false;    // no daemon: gates forced open
  bool warned_ GUARDED_BY(g_mu) = false;     // GoUngated said why once
  bool wait_said_ GUARDED_BY(g_mu) = false;  // WaitNoticeDue said yes once
  DeviceState dev_[kMaxDevices];
};

// The shim keeps its session in static storage, where no destructor may run at exit while job
// threads still submit.
static_assert(std::is_trivially_destructible_v<LeaseSession>);

}  // namespace gshare::shim::lease
