// MemoryHost: what the memory engines need from the lease client above them — the reports to
// the daemon and the device gates. memory/ owns the interface and lease/ implements it
// (lease/lease_memory_host.cc), so that includes run one way, driver/ < memory/ < lease/ <
// hooks/ (scripts/check_layers.py). Any thread; every call is safe under the engines' locks
// (the implementation only sets values for the lease thread's next report, or takes the lease
// client's own locks, which come before the engines' in the lock order).
#pragma once

#include <cstdint>

namespace gshare::shim {

class MemoryHost {
 public:
  // The engine's memory on `device` changed (-1: on some device): report it to the daemon.
  virtual void MemoryChanged(int device) = 0;
  // An allocation on `device` waits for `bytes` of room (0: no longer).
  virtual void SetDemand(int device, uint64_t bytes) = 0;
  // Sends the process's memory report on `device` now, not at the lease thread's next tick
  // (a swap-in that waits for room). Not under an engine's lock: it writes to the socket.
  virtual void ReportNow(int device) = 0;
  // Bytes on `device` that cannot be evicted (signed delta; memory shared with other
  // processes, memory past the engine), and their sum so far.
  virtual void AddFixedBytes(int device, int64_t delta) = 0;
  virtual int64_t FixedBytes(int device) = 0;
  // Bytes other jobs hold on `device` that cannot move, as of the last grant.
  virtual uint64_t OthersFixed(int device) = 0;
  // The process is busy on `device` (allocating, waiting for room): not idle (device_gate.h).
  virtual void MarkActive(int device) = 0;
  // The memory file of the host pool this process shares with its owner's other processes
  // (kHostPool; the caller closes it), or -1 when there is none (no daemon, not in a job).
  // Blocks for up to ~2 s: not under an engine's lock.
  virtual int SharedHostPool() = 0;

 protected:
  ~MemoryHost() = default;
};

// The process's one MemoryHost (defined in lease/).
MemoryHost& Host();

}  // namespace gshare::shim
