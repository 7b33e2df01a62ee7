// RoomWait: how long to wait for device memory that another process is giving up: the wait
// goes on while the GPU's free memory reaches new highs and ends `stall_ns` after the last
// one. Plain value type, not synchronized: one owner at a time, any thread; the caller owns
// the clock (ns, CLOCK_MONOTONIC).
//
// Why no fixed deadline: the other process's eviction frees the GPU chunk by chunk, as fast
// as its host memory takes the data, which is several times slower into memory the host has
// never touched than into pinned memory (docs/benchmarks.md, "Why pools grew at 0.5–5 GB/s:
// the VM's first touch"), so a fixed deadline either fails healthy evictions or waits long on
// dead ones. The free memory is asked (a driver call, cuMemGetInfo) at most every kPollNs,
// which is fine-grained enough for stall times of 0.6 s and more and keeps the query out of
// the 1 ms retry loop (its cost next to another process's unmaps was not measured).
//
// The pause between retries (PauseNs) is short while room is coming (the wait's first
// kQuickNs, and kQuickNs after each new high), longer once it stalls: memory held by a job that
// is not giving it up (one of higher priority, whose memory the swap-in must wait out) is then
// retried at most every kStalledPauseNs instead of every millisecond. Each retry is a driver
// call that fails (cuMemCreate, CUDA_ERROR_OUT_OF_MEMORY); an MPS client's goes through the
// server that also serves the job of higher priority (CUDA MPS documentation, "Architecture").
#pragma once

#include <algorithm>
#include <cstdint>

namespace gshare::shim {

class RoomWait {
 public:
  static constexpr int64_t kPollNs = 10'000'000;
  static constexpr int64_t kQuickNs = 50'000'000;
  static constexpr int64_t kPauseNs = 1'000'000;
  static constexpr int64_t kStalledPauseNs = 8'000'000;
  using FreeBytesFn = uint64_t (*)();  // the GPU's free bytes now

  RoomWait(int64_t stall_ns, int64_t now_ns) : stall_ns_(stall_ns), since_ns_(now_ns) {}
  // Whether to try again at `now_ns`; asks `free_bytes` when a poll is due.
  bool KeepWaiting(int64_t now_ns, FreeBytesFn free_bytes) {
    if (!seen_ || now_ns - polled_ns_ >= kPollNs) {
      polled_ns_ = now_ns;
      return KeepWaiting(now_ns, free_bytes());
    }
    return now_ns - since_ns_ < stall_ns_;
  }
  // The same with the GPU having `free_bytes` free at `now_ns`. The first sample is the
  // baseline, not progress.
  bool KeepWaiting(int64_t now_ns, uint64_t free_bytes) {
    if (free_bytes > best_) {
      if (seen_) since_ns_ = now_ns;
      best_ = free_bytes;
    }
    seen_ = true;
    return now_ns - since_ns_ < stall_ns_;
  }
  // How long to sleep before the next retry at `now_ns`, at least `floor_ns` (a caller that
  // drops its locks to sleep asks for more): the floor within kQuickNs of the wait's start or
  // its last new high, else kStalledPauseNs, never past the wait's end.
  int64_t PauseNs(int64_t now_ns, int64_t floor_ns = kPauseNs) const {
    const int64_t quiet = now_ns - since_ns_;
    if (quiet < kQuickNs) return floor_ns;
    return std::clamp(stall_ns_ - quiet, floor_ns, std::max(floor_ns, kStalledPauseNs));
  }

 private:
  int64_t stall_ns_;
  int64_t since_ns_;
  int64_t polled_ns_ = 0;
  uint64_t best_ = 0;
  bool seen_ = false;
};

}  // namespace gshare::shim
