// RoomWait: how long to wait for device memory that another process is giving up.
// Its eviction frees the GPU chunk by chunk, as fast as its host memory takes the data:
// ~40 GB/s into pinned memory, but 0.5-5 GB/s on the H100's VM into memory it had never
// touched (docs/benchmarks.md "First touch of host memory"), so a fixed deadline either fails
// healthy evictions or waits long on dead ones. The wait goes on while the free memory
// reaches new highs and ends `stall_ns` after the last one.
// Plain value type, no locking; the caller polls the free memory (swap_internal::
// FreeDeviceBytes) and owns the clock (ns, CLOCK_MONOTONIC).
#pragma once

#include <cstdint>

namespace gshare::shim {

class RoomWait {
 public:
  RoomWait(int64_t stall_ns, int64_t now_ns) : stall_ns_(stall_ns), since_ns_(now_ns) {}
  // Whether to try again at `now_ns`, the GPU having `free_bytes` free. The first sample is
  // the baseline, not progress.
  bool KeepWaiting(int64_t now_ns, uint64_t free_bytes) {
    if (free_bytes > best_) {
      if (seen_) since_ns_ = now_ns;
      best_ = free_bytes;
    }
    seen_ = true;
    return now_ns - since_ns_ < stall_ns_;
  }

 private:
  int64_t stall_ns_;
  int64_t since_ns_;
  uint64_t best_ = 0;
  bool seen_ = false;
};

}  // namespace gshare::shim
