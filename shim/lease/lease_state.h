// Internal to the lease client (lease_client.cc: connection, thread, release protocol;
// lease_memory.cc: memory reports, grants with swap-in, evictions). Not for other files.
// Locking as described in lease_client.cc: `g.mu` guards the per-device flags and the
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

namespace gshare::shim::lease {

namespace proto = gshare::proto;

inline int64_t NowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
inline int64_t NowMs() { return NowNs() / 1000000; }

struct DeviceState {
  bool requested = false;   // a request is outstanding
  bool holding = false;     // the daemon granted us the lease (gate may be open)
  bool dropping = false;    // a release is in progress
  bool drop_deferred = false;  // DROP arrived during a stream capture
  bool uuid_known = false;
  int waiters = 0;          // threads blocked in EnterSlow
  uint64_t epoch = 0;       // epoch of the current grant
  int64_t last_active_ms = 0;
  // Of the idle time since last_active_ms, what the host pool spent registering memory
  // (host_pool.h: it holds up the process's other driver calls, so the job may have been
  // blocked, not idle). Only the early release leaves it out.
  int64_t registering_ms = 0;
  void Active(int64_t now_ms) {
    last_active_ms = now_ms;
    registering_ms = 0;
  }
  // Early release (gap_predictor.h): the job's idle gaps so far; the cost of one handoff to
  // the waiting job, from the daemon's CONTENDED (-1: nobody waits); an idle release whose
  // gap has not ended yet (the next submission ends it).
  GapPredictor gaps;
  int64_t handoff_ms = -1;
  bool gap_open = false;
  proto::GpuUuid uuid{};
  // Gap watch (gap_watch.h): the latest gap GapEnds published and the last one sent
  // (CLOCK_MONOTONIC ns); a stretch ordered, and one holding the gate until stretch_until_ns.
  bool watching = false;
  std::atomic<int64_t> gap_begin_ns{0};
  std::atomic<int64_t> gap_end_ns{0};
  int64_t gap_sent_ns = 0;
  std::atomic<int64_t> stretch_ms{0};
  bool stretched = false;
  int64_t stretch_until_ns = 0;
  std::atomic<int64_t> bytes{0};        // allocated past the swap engine
  std::atomic<bool> bytes_dirty{false};  // a memory report is due
  std::atomic<uint64_t> demand{0};
  std::atomic<uint64_t> others_fixed{0};
};

// All state has static storage and trivial destruction (the shim must not run
// destructors at exit while job threads may still submit).
struct State {
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
  pthread_mutex_t send_mu = PTHREAD_MUTEX_INITIALIZER;
  bool started = false;  // thread running (this process)
  bool ungated = false;  // daemon unreachable: gates forced open
  bool warned = false;
  int fd = -1;
  // A connection given up while the lease thread may still be polling it: shut down at once,
  // closed by the lease thread itself, so its descriptor number cannot be reused under it.
  int dead_fd = -1;
  int idle_release_ms = 500;  // as configs/gshare.toml; gshare run passes the config's
  bool early_release = true;  // [scheduler] early_release (GSHARE_EARLY_RELEASE=0: off)
  // A daemon that sends nothing for this long, not even the answer to a ping, is taken for
  // hung: the job runs ungated until it answers again (GSHARE_DAEMON_TIMEOUT_MS;
  // docs/design.md says why 4 s).
  int daemon_timeout_ms = 4000;
  uint64_t job_id = 0;
  char socket_path[sizeof(sockaddr_un::sun_path)] = {};
  DeviceState dev[kMaxDevices];
};

extern State g;
extern DeviceGate g_gates[kMaxDevices];

// Sends one frame; false when the connection is gone. Any thread.
bool SendFrame(int fd, proto::MsgType type, const void* payload, uint32_t len);
bool SendLease(proto::MsgType type, int device, uint64_t epoch, uint32_t reason);
void EnsureUuid(int device);
int DeviceOfUuid(const proto::GpuUuid& u);
// Closes the gate, drains, synchronizes and acknowledges; g.mu NOT held, d.dropping set.
void Release(int device, proto::ReleaseReason reason);

// lease_memory.cc
// The ledger entry of this process on `device` (MemReportMsg). Any thread.
bool SendReport(int device, uint32_t flags, uint64_t epoch, uint64_t swapin_ns,
                uint64_t swapin_bytes);
// A lease request preceded by a memory report. REQUIRES: g.mu held.
bool RequestLease(int device);
// Without a daemon: the process's memory comes back and it runs as if alone.
void RunUngated(int device);
void HandleGrant(const proto::LeaseMsg& m);
void HandleEvict(const proto::LeaseMsg& m);

}  // namespace gshare::shim::lease
