// Internal to the lease client (lease_client.cc: connection, thread, release protocol;
// lease_memory.cc: memory reports, grants with swap-in, evictions; gap_watch.cc: the lease
// thread's side of gap reports and stretches; priority_lane.cc and priority_window.cc: the
// contexts' synchronization and the clock). Not for other files.
// Locking as described in lease_client.cc: `g_mu` guards the per-device flags and the
// connection state, `g.send_mu` serializes socket writes.
#pragma once

#include <pthread.h>
#include <sys/un.h>
#include <time.h>

#include <atomic>
#include <cstdint>

#include "hooks/context_registry.h"
#include "lease/device_gate.h"
#include "lease/gap_predictor.h"
#include "gshare/protocol.h"
#include "mutex.h"

namespace gshare::shim::lease {

namespace proto = gshare::proto;

// The lease client's lock: guards what is marked GUARDED_BY(g_mu) below. Threads wait for
// a grant on g_cv, with g_mu.
extern Mutex g_mu;
extern pthread_cond_t g_cv;

inline int64_t NowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
inline int64_t NowMs() { return NowNs() / 1000000; }

// The atomics need no lock. uuid_known and uuid are set once, under g_mu (EnsureUuid), and
// never change after: they are read without g_mu too.
struct DeviceState {
  bool requested GUARDED_BY(g_mu) = false;      // a request is outstanding
  bool holding GUARDED_BY(g_mu) = false;        // the daemon granted the lease (gate may be open)
  bool dropping GUARDED_BY(g_mu) = false;       // a release is in progress
  bool drop_deferred GUARDED_BY(g_mu) = false;  // DROP arrived during a stream capture
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

// All state has static storage and trivial destruction (the shim must not run
// destructors at exit while job threads may still submit).
struct State {
  Mutex send_mu;                          // one frame at a time on the socket; guards no data
  bool started GUARDED_BY(g_mu) = false;  // thread running (this process)
  bool ungated GUARDED_BY(g_mu) = false;  // daemon unreachable: gates forced open
  bool warned GUARDED_BY(g_mu) = false;
  // A submission waited kWaitNoticeMs for a grant: said once on stderr, unless GSHARE_QUIET.
  bool wait_said GUARDED_BY(g_mu) = false;
  int fd GUARDED_BY(g_mu) = -1;  // read without g_mu only through FdUnlocked()
  // A connection given up while the lease thread may still be polling it: shut down at once,
  // closed by the lease thread itself, so its descriptor number cannot be reused under it.
  int dead_fd GUARDED_BY(g_mu) = -1;
  // The settings below are set by EnsureStartedLocked before the lease thread starts and
  // only read after that, without g_mu.
  int idle_release_ms = 500;  // as configs/gshare.toml; gshare run passes the config's
  bool early_release = true;  // [scheduler] early_release (GSHARE_EARLY_RELEASE=0: off)
  // A daemon that sends nothing for this long, not even the answer to a ping, is taken for
  // hung: the job runs ungated until it answers again (GSHARE_DAEMON_TIMEOUT_MS;
  // docs/design.md says why 4 s).
  int daemon_timeout_ms = 4000;
  uint64_t job_id = 0;
  uint8_t job_token[16] = {};  // GSHARE_JOB_TOKEN (set with job_id)
  char socket_path[sizeof(sockaddr_un::sun_path)] = {};
  DeviceState dev[kMaxDevices];
};

extern State g;
extern DeviceGate g_gates[kMaxDevices];

// g.fd without g_mu, for SendReport, which runs with and without g_mu held (the lease thread
// between its locked steps, ReleaseAtExit). A connection given up meanwhile is shut down but
// stays open until the lease thread closes it (dead_fd), so a stale descriptor fails the send.
inline int FdUnlocked() NO_THREAD_SAFETY_ANALYSIS { return g.fd; }

// A connection to the daemon socket at `path` once both are found trustworthy (the socket
// and its directory are this user's or root's; so is the listener), nothing sent yet; -1
// otherwise. Any thread.
int ConnectTo(const char* path);
// A connection to the daemon a process of this user uses (docs/design.md "Which daemon"):
// $GSHARE_SOCKET when set, else the system daemon when it answers, else the user's own; `path`
// gets the socket tried last (the user's own when the system daemon did not answer). -1 when
// none answers. Nothing sent yet. Any thread.
int ConnectChosen(char* path, size_t cap);
// GSHARE_JOB_TOKEN's 32 hex digits into `out`'s 16 bytes; all zero when absent or malformed.
void ParseJobToken(const char* hex, uint8_t out[16]);
bool ReadAll(int fd, void* data, size_t len);

// Sends one frame; false when the connection is gone. Any thread.
bool SendFrame(int fd, proto::MsgType type, const void* payload, uint32_t len) EXCLUDES(g.send_mu);
bool SendLease(proto::MsgType type, int device, uint64_t epoch, uint32_t reason) REQUIRES(g_mu);
void EnsureUuid(int device) REQUIRES(g_mu);
int DeviceOfUuid(const proto::GpuUuid& u) REQUIRES(g_mu);
// Synchronizes every context of this process on `device` (cuCtxSynchronize). Any thread.
void SyncContexts(int device);
// Closes the gate, drains, synchronizes and acknowledges; d.dropping set.
void Release(int device, proto::ReleaseReason reason) EXCLUDES(g_mu);

// lease_memory.cc
// The ledger entry of this process on `device` (MemReportMsg). Any thread.
bool SendReport(int device, uint32_t flags, uint64_t epoch, uint64_t swapin_ns,
                uint64_t swapin_bytes);
// A lease request preceded by a memory report.
bool RequestLease(int device) REQUIRES(g_mu);
// Without a daemon: the process's memory comes back and it runs as if alone.
void RunUngated(int device);
void HandleGrant(const proto::LeaseMsg& m) EXCLUDES(g_mu);
void HandleEvict(const proto::LeaseMsg& m) EXCLUDES(g_mu);
// kSwapStage: stage (SwapSpace::Stage) while the process holds and wants no lease there.
void HandleStage(const proto::LeaseMsg& m) EXCLUDES(g_mu);

// gap_watch.cc (gap_watch.h), the lease thread's side.
// Sends the gap published since the last call, if any.
void SendGap(int device) REQUIRES(g_mu);
// kGapWatch and kStretchGap from the daemon.
void HandleGapWatch(const proto::LeaseMsg& m) EXCLUDES(g_mu);
void HandleStretch(const proto::LeaseMsg& m) EXCLUDES(g_mu);
// The lease on `device` ends (a release): no more reports or stretches.
void StopGapWatch(int device) REQUIRES(g_mu);
// EnterSlow, the gate closed: while a stretch holds the gate, waits for its end (or a
// release) on g_cv and returns true; reopens the gate when the stretch is over. False when no
// stretch holds the gate.
bool WaitStretch(int device) REQUIRES(g_mu);

}  // namespace gshare::shim::lease
