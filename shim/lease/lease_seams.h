// The seams of the lease session (lease_session.h): the clock it reads, the daemon link it
// sends lease frames on, and the calls into the rest of the shim that the release protocol
// and the release decisions make (the driver, the memory engines, the process's activity).
// Production implementations are in lease_wiring.cc; unit tests pass fakes. Each method says
// which lock it needs; the threads are the lease session's callers'.
#pragma once

#include <pthread.h>

#include <cstdint>

#include "gshare/protocol.h"
#include "memory/memory_engine.h"
#include "mutex.h"

namespace gshare::shim::lease {

// The lease client's lock: guards what is marked GUARDED_BY(g_mu) (lease_session.h,
// lease_state.h). Threads wait for a grant on g_cv, with g_mu. Both have static storage and
// are defined in lease_session.cc.
extern Mutex g_mu;
extern pthread_cond_t g_cv;

// The seams are used through references held by a LeaseSession in static storage: no
// virtual destructor (none is ever deleted through the interface), so the implementations
// stay trivially destructible and constant-initialized.

// CLOCK_MONOTONIC. Any thread, any lock.
class LeaseClock {
 public:
  virtual int64_t NowMs() const = 0;
  virtual int64_t NowNs() const = 0;
  // Waits `ms` milliseconds (nanosleep). Without g_mu.
  virtual void SleepMs(int64_t ms) const = 0;

 protected:
  constexpr LeaseClock() = default;
  ~LeaseClock() = default;
};

// What a memory report after a grant's swap-in says of it (proto::MemReportMsg): flags
// kReportAfterSwapIn, with kReportSwapInFailed when not all came back; the grant's epoch; the
// time taken (ns), the bytes copied and, of the time, the wait for room (ns).
struct SwapInNote {
  uint32_t flags = 0;
  uint64_t epoch = 0;
  uint64_t ns = 0;
  uint64_t bytes = 0;
  uint64_t room_wait_ns = 0;
};

// The connection to the daemon. Each call sends one frame (or two, RequestLease) and returns
// false when the connection is gone; it never blocks on a reply.
class DaemonLink {
 public:
  // Connects on the first call in this process (the connection, its thread, the settings of
  // the environment); the session then knows whether it runs gated (LeaseSession::GoUngated).
  virtual void Start() REQUIRES(g_mu) = 0;
  // Gives the connection up (the session fails open); a later reconnection makes a new one.
  virtual void Disconnect() REQUIRES(g_mu) = 0;
  // The daemon's socket, for messages. Set once by Start.
  virtual const char* Where() const = 0;
  // This process's job (GSHARE_JOB_ID; 0 outside a job), for messages. Set once by Start.
  virtual uint64_t JobId() const = 0;
  // Whether a connection is up (a report can be sent now).
  virtual bool Connected() const REQUIRES(g_mu) = 0;
  // A LeaseMsg of `type` about `device` (its uuid and ordinal), with `epoch` and `reason`.
  virtual bool SendLease(proto::MsgType type, int device, uint64_t epoch, uint32_t reason)
      REQUIRES(g_mu) = 0;
  // A lease request on `device`, preceded by a memory report where a memory engine is on.
  virtual bool RequestLease(int device) REQUIRES(g_mu) = 0;
  // The process's ledger entry on `device` (MemReportMsg, no swap-in). Any lock.
  virtual bool SendReport(int device) = 0;
  // The ledger entry after a grant's swap-in on `device`. Without g_mu.
  virtual bool SendSwapInReport(int device, const SwapInNote& note) = 0;

 protected:
  constexpr DaemonLink() = default;
  ~DaemonLink() = default;
};

// The lease thread's connection to the daemon (lease_client.cc's socket): the descriptor the
// senders use, and the calls the lease thread's loop (LeaseLoop) makes on it. Lease thread,
// except where a method says otherwise.
class DaemonConnection {
 public:
  // The connection in use (-1: none).
  virtual int Fd() const REQUIRES(g_mu) = 0;
  // Closes a connection given up earlier (DaemonLink::Disconnect) once nothing polls it.
  virtual void CloseDead() REQUIRES(g_mu) = 0;
  // A new connection to the daemon chosen at start, hello sent; -1 when none answers.
  virtual int Dial() = 0;
  // Sends a ping with `seq` on a new connection and waits up to `ms` for its pong (a stopped
  // daemon's socket accepts connections too). False when nothing or something else came.
  virtual bool AwaitPong(int fd, uint64_t seq, int ms) = 0;
  // Makes `fd` (from Dial) the connection in use.
  virtual void Adopt(int fd) REQUIRES(g_mu) = 0;
  // Closes a connection that was not adopted.
  virtual void Close(int fd) = 0;
  // Waits up to `ms` for a frame on `fd`: 1 one is there, 0 none (also when interrupted),
  // -1 the connection failed.
  virtual int Wait(int fd, int ms) = 0;
  // Reads one frame from `fd` and hands it on (the session, the gap watch, the board);
  // false when the connection is broken or the peer misbehaves.
  virtual bool Receive(int fd) = 0;
  // Sends a ping with `seq`; false when the connection is gone.
  virtual bool Ping(int fd, uint64_t seq) = 0;

 protected:
  constexpr DaemonConnection() = default;
  ~DaemonConnection() = default;
};

// What the lease decisions ask of the rest of the shim. None takes g_mu: the methods marked
// REQUIRES(g_mu) are called with it held, the others with or without it.
class ShimCalls {
 public:
  // A stream capture is in progress in this process (its work is recorded, not submitted:
  // releasing now would synchronize inside the capture and invalidate it).
  virtual bool Capturing() const = 0;
  // Whether a thread waited for GPU work (a synchronizing call ended or is in progress, or a
  // query found work unfinished) since the last call; clears the "ended" part.
  virtual bool TakeGpuWaited() = 0;
  // The process's memory engine (memory_engine.h): its memory at a grant, a release, an
  // eviction, a stage, and whether it is pinning host memory (which holds up the process's
  // other driver calls: the job may be blocked there rather than idle).
  virtual MemoryEngine& Memory() = 0;
  // The uuid of device ordinal `device` (cuDeviceGetUuid); false when the driver has none.
  virtual bool DeviceUuid(int device, proto::GpuUuid* out) = 0;
  // A release about to begin is the process's last (the checkpoint engine's interpreter is
  // shutting down, interpreter_exit.h): it is then reported as kExit.
  virtual bool Finalizing() const = 0;
  // Synchronizes every context of this process on `device` (cuCtxSynchronize); returns when
  // the GPU has finished this process's work there. The gate is closed and drained.
  virtual void SyncContexts(int device) = 0;
  // Whether another job waits for `device` (InflightWindow: bounds the queued work).
  virtual void SetContended(int device, bool contended) = 0;
  // The grant on `device` ended: the gap watch and any stretch stop (gap_watch.h).
  virtual void StopGapWatch(int device) REQUIRES(g_mu) = 0;
  // The lease thread's side of the gap watch on `device` (gap_watch.h): sends the idle gap
  // published since the last tick, if any.
  virtual void SendGap(int device) REQUIRES(g_mu) = 0;
  // The time this process's submissions on `device` waited for higher priorities so far (ns;
  // priority_lane.h).
  virtual int64_t HeldNs(int device) const = 0;
  // A thread entering `device`'s closed gate: while a stretch of an idle gap holds it, waits
  // for the stretch's end and returns true (gap_watch.h); false when no stretch holds it.
  virtual bool WaitStretch(int device) REQUIRES(g_mu) = 0;
  // Blocks the calling thread until the lease state may have changed (a grant, a release, the
  // daemon gone): pthread_cond_wait on g_cv, which gives g_mu up meanwhile.
  virtual void WaitForChange() REQUIRES(g_mu) = 0;
  // The process runs without a daemon: the priority lanes forget their seats (priority_lane.h).
  virtual void WentUngated() = 0;
  // One line on stderr (the shim's log).
  virtual void Warn(const char* line) = 0;

 protected:
  constexpr ShimCalls() = default;
  ~ShimCalls() = default;
};

}  // namespace gshare::shim::lease
