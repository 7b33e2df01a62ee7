// OthersView: what other jobs hold on a GPU, as the job's cuMemGetInfo reports it. A rise shows
// at once; a drop shows only after it has lasted `hold_ns`, so that the free memory a job reads
// does not rise because another job ended or shrank while the job measured itself.
//
// Why: serving engines size their KV cache from free memory read around a profiling run and
// refuse to start when free memory rose across it (vLLM's memory profiling: "This happens when
// other processes sharing the same container release GPU memory while vLLM is profiling during
// initialization", vllm#56830). Other jobs start and end at any time under gshare, so without
// the hold a neighbour's exit aborts the engine's start. A process's first read sees the
// current value (no history), so a job that starts after a neighbour ended sees its room. A
// job's own allocations and frees still show at once (they are not part of this value).
//
// Lock-free: Report may run on any thread at once; racing calls may each start the hold or end
// it, which only moves the drop's visibility by one call. Times are CLOCK_MONOTONIC ns, from the
// caller.
#pragma once

#include <atomic>
#include <cstdint>

namespace gshare::shim {

class OthersView {
 public:
  // Long enough for an engine's profiling run (seconds to a minute for large models), short
  // enough that a long-lived process sees a neighbour's room within a minute.
  static constexpr int64_t kHoldNs = 60'000'000'000;

  constexpr explicit OthersView(int64_t hold_ns = kHoldNs) : hold_ns_(hold_ns) {}

  // The bytes of other jobs to report at `now_ns`, given what they hold now (`current`).
  uint64_t Report(uint64_t current, int64_t now_ns) {
    const uint64_t shown = shown_.load(std::memory_order_relaxed);
    if (!seen_.load(std::memory_order_relaxed) || current >= shown) {
      shown_.store(current, std::memory_order_relaxed);
      seen_.store(true, std::memory_order_relaxed);
      drop_since_ns_.store(0, std::memory_order_relaxed);
      return current;
    }
    int64_t since = drop_since_ns_.load(std::memory_order_relaxed);
    if (since == 0) {
      drop_since_ns_.store(now_ns, std::memory_order_relaxed);
      return shown;
    }
    if (now_ns - since < hold_ns_) return shown;
    shown_.store(current, std::memory_order_relaxed);
    drop_since_ns_.store(0, std::memory_order_relaxed);
    return current;
  }

 private:
  const int64_t hold_ns_;
  std::atomic<uint64_t> shown_{0};
  std::atomic<bool> seen_{false};
  std::atomic<int64_t> drop_since_ns_{0};  // 0: no drop pending
};

}  // namespace gshare::shim
