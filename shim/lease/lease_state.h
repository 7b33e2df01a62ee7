// Internal to the lease client (lease_client.cc: the thread, the frames received, fork;
// daemon_socket.h: the connection, its frames and trusted connections; lease_session.h: the
// per-device state, release decisions and protocol, the memory engine with the lease;
// lease_memory.cc: memory reports; gap_watch.cc: the lease thread's side of gap reports and
// stretches; priority_lane.cc and priority_window.cc: the contexts' synchronization).
// Not for other files. Locking as described in lease_client.cc: `g_mu` (lease_seams.h) guards the
// per-device flags and the connection's descriptors (daemon_socket.h), whose own lock serializes
// socket writes.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>

#include "driver/context_registry.h"
#include "lease/daemon_socket.h"
#include "lease/device_gate.h"
#include "lease/gap_predictor.h"
#include "lease/lease_loop.h"
#include "lease/lease_session.h"
#include "gshare/protocol.h"
#include "mutex.h"

namespace gshare::shim::lease {

namespace proto = gshare::proto;

// All state has static storage and trivial destruction (the shim must not run destructors at
// exit while job threads may still submit). The process's connection to its daemon
// (ConnectChosen, ConnectTo):
extern DaemonSocket g_socket;
extern DeviceGate g_gates[kMaxDevices];
// The process's lease decisions and per-device state, wired to the real clock, socket and
// driver (lease_wiring.cc).
extern LeaseSession g_session;
inline DeviceState& Dev(int device) { return g_session.Dev(device); }
// The lease thread's loop over the connection (lease_loop.h), wired in lease_wiring.cc.
extern LeaseLoop g_loop;

// lease_client.cc: one frame read and handed on (the lease thread's side of
// DaemonConnection); false when the connection is broken or the peer misbehaves.
bool ReceiveOne(int fd);
// GSHARE_JOB_TOKEN's 32 hex digits into `out`'s 16 bytes; all zero when absent or malformed.
void ParseJobToken(const char* hex, uint8_t out[16]);
// GSHARE_JOB_ID and GSHARE_JOB_TOKEN, as a query on a connection of its own proves its job
// (kMemoryQuery, kHostPoolQuery); false when the process is in no gshare job.
bool JobProofFromEnv(uint64_t* job_id, uint8_t token[16]);

// A LeaseMsg of `type` about `device` on the connection. Any thread.
bool SendLease(proto::MsgType type, int device, uint64_t epoch, uint32_t reason) REQUIRES(g_mu);
// The production DaemonLink's Start (lease_client.cc).
void EnsureStartedLocked() REQUIRES(g_mu);
inline int DeviceOfUuid(const proto::GpuUuid& u) REQUIRES(g_mu) { return g_session.DeviceOf(u); }
// Synchronizes every context of this process on `device` (cuCtxSynchronize). Any thread.
void SyncContexts(int device);
// Closes the gate, drains, synchronizes and acknowledges; d.dropping set (LeaseSession).
inline void Release(int device, proto::ReleaseReason reason) EXCLUDES(g_mu) {
  g_session.Release(device, reason);
}

// lease_memory.cc
// The ledger entry of this process on `device` (MemReportMsg). Any thread.
bool SendReport(int device, uint32_t flags, uint64_t epoch, uint64_t swapin_ns,
                uint64_t swapin_bytes, uint64_t swapin_wait_ns = 0);
// A lease request preceded by a memory report.
bool RequestLease(int device) REQUIRES(g_mu);

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
