// LeaseClient: the shim's side of the lease protocol. Owns the connection to the daemon
// and a background thread that receives GRANT/DROP, performs releases (close the gate,
// drain, synchronize every context, acknowledge), gives the lease back after an idle
// period and reports device memory. Submitting threads enter it only on the slow path
// (gate closed). If the daemon cannot be reached the job runs ungated, with one warning,
// and the thread keeps trying to reconnect. Any thread; fork-safe (see ResetAfterFork).
#pragma once

#include <atomic>
#include <cstdint>

#include "lease/device_gate.h"
#include "driver/context_registry.h"
#include "lease/gap_watch.h"
#include "lease/priority_lane.h"

namespace gshare::shim {

// Gates of this process, one per device ordinal.
DeviceGate& GateOf(int device);

// Number of stream captures in progress in this process (stream capture work is recorded,
// not submitted: it bypasses the gate, and releases wait until captures end).
extern std::atomic<int> g_active_captures;

// Threads of this process inside a synchronizing call (cuCtxSynchronize,
// cuStreamSynchronize, cuEventSynchronize), and whether one ended or a query found work
// unfinished since the lease thread last looked: a job waiting for its GPU work is busy,
// not idle (idle release, early release). Relaxed atomics; any thread.
extern std::atomic<int> g_syncing;
extern std::atomic<bool> g_gpu_waited;
inline void NoteGpuWait() {
  if (!g_gpu_waited.load(std::memory_order_relaxed)) {
    g_gpu_waited.store(true, std::memory_order_relaxed);
  }
}
struct SyncScope {
  SyncScope() : lane_submits_(g_lane_submits.load(std::memory_order_relaxed)) {
    g_syncing.fetch_add(1, std::memory_order_relaxed);
  }
  ~SyncScope() {
    g_syncing.fetch_sub(1, std::memory_order_relaxed);
    NoteGpuWait();
    AfterSync();  // a gap may begin (gap_watch.h)
    if (__builtin_expect(g_lanes_watched.load(std::memory_order_relaxed) != 0, 0)) {
      LanesSynced(lane_submits_);  // a higher-priority process's burst may have ended
    }
  }
  SyncScope(const SyncScope&) = delete;
  SyncScope& operator=(const SyncScope&) = delete;

 private:
  uint64_t lane_submits_;
};

class LeaseClient {
 public:
  static LeaseClient& Get();

  // Slow path of a submission on `device`: asks for the lease if needed and blocks until
  // the gate is open; returns with the caller inside the gate (it must call Exit()).
  void EnterSlow(int device);

  // Device memory allocated past the swap engine (bytes, signed delta) for `device`:
  // it cannot be evicted. Reported to the daemon by the client thread within ~100 ms.
  void AddDeviceBytes(int device, int64_t delta);
  int64_t DeviceBytes(int device);
  // The swap engine's memory on `device` changed (-1: on some device): report it.
  void MemoryChanged(int device);
  // An allocation on `device` waits for `bytes` of room (0: no longer). Only sets a value
  // for the next report; safe under the engine's lock.
  void SetDemand(int device, uint64_t bytes);
  // Sends the memory report of `device` now (blocking write to the daemon's socket).
  void ReportNow(int device);
  // Bytes other jobs hold on `device` that cannot move, as of the last grant.
  uint64_t OthersFixed(int device);
};

// pthread_atfork child handler: forget the parent's connection, thread and lease.
void ChildAfterFork();

}  // namespace gshare::shim
