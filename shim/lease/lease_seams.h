// The seams of the lease session (lease_session.h): the clock it reads, the daemon link it
// sends lease frames on, and the calls into the rest of the shim that the release protocol
// and the release decisions make (the driver, the memory engines, the process's activity).
// Production implementations are in lease_wiring.cc; unit tests pass fakes. Each method says
// which lock it needs; the threads are the lease session's callers'.
#pragma once

#include <pthread.h>

#include <cstdint>

#include "gshare/protocol.h"
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

 protected:
  constexpr LeaseClock() = default;
  ~LeaseClock() = default;
};

// The connection to the daemon. Each call sends one frame (or two, RequestLease) and returns
// false when the connection is gone; it never blocks on a reply.
class DaemonLink {
 public:
  // A LeaseMsg of `type` about `device` (its uuid and ordinal), with `epoch` and `reason`.
  virtual bool SendLease(proto::MsgType type, int device, uint64_t epoch, uint32_t reason)
      REQUIRES(g_mu) = 0;
  // A lease request on `device`, preceded by a memory report where a memory engine is on.
  virtual bool RequestLease(int device) REQUIRES(g_mu) = 0;
  // The process's ledger entry on `device` (MemReportMsg, no swap-in). Any lock.
  virtual bool SendReport(int device) = 0;

 protected:
  constexpr DaemonLink() = default;
  ~DaemonLink() = default;
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
  // The host pool is registering memory (host_pool.h), which holds up the process's other
  // driver calls: the job may be blocked there rather than idle.
  virtual bool HostPinning() const = 0;
  // A release about to begin is the process's last (the checkpoint engine's interpreter is
  // shutting down, interpreter_exit.h): it is then reported as kExit.
  virtual bool Finalizing() const = 0;
  // Synchronizes every context of this process on `device` (cuCtxSynchronize); returns when
  // the GPU has finished this process's work there. The gate is closed and drained.
  virtual void SyncContexts(int device) = 0;
  // The memory engines' part of a release on `device`, after SyncContexts: the process no
  // longer runs there; managed memory leaves on kDropped, swapped memory is discarded on kExit.
  virtual void MemoryStopped(int device, proto::ReleaseReason reason) = 0;
  // Whether another job waits for `device` (InflightWindow: bounds the queued work).
  virtual void SetContended(int device, bool contended) = 0;
  // The grant on `device` ended: the gap watch and any stretch stop (gap_watch.h).
  virtual void StopGapWatch(int device) REQUIRES(g_mu) = 0;

 protected:
  constexpr ShimCalls() = default;
  ~ShimCalls() = default;
};

}  // namespace gshare::shim::lease
