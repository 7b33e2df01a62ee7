// DeviceGate: the per-process, per-GPU admission gate every submission passes.
// Fast path (lease held): one atomic read-modify-write to enter and one to leave; no lock,
// no syscall. Closing the gate waits until no thread is inside, so after CloseAndDrain()
// returns no submission can reach the driver until Open(). Enter/Exit: any thread;
// Open/CloseAndDrain: the lease client thread (or a fork handler via Reset); Close and
// Open also a submitting thread that stretches an idle gap (gap_watch.h).
#pragma once

#include <sched.h>
#include <time.h>

#include <atomic>
#include <cstdint>

namespace gshare::shim {

class alignas(64) DeviceGate {
 public:
  // Tries to enter. True: the caller is inside and must call Exit(). False: closed.
  bool TryEnter() {
    uint32_t s = state_.fetch_add(1, std::memory_order_acquire);
    if (__builtin_expect((s & kOpen) != 0, 1)) return true;
    state_.fetch_sub(1, std::memory_order_release);
    return false;
  }
  void Exit() { state_.fetch_sub(1, std::memory_order_release); }

  // Marks a submission for idle detection: a plain store only when the flag is clear.
  // Returns true when it was clear: the first submission since TakeActive or ClearActive.
  bool MarkActive() {
    if (__builtin_expect(active_.load(std::memory_order_relaxed), 1)) return false;
    active_.store(true, std::memory_order_relaxed);
    return true;
  }
  // Returns whether any submission happened since the last call, and clears the flag.
  bool TakeActive() { return active_.exchange(false, std::memory_order_relaxed); }
  // Clears the flag so that the next submission's MarkActive returns true (gap_watch.h).
  void ClearActive() { active_.store(false, std::memory_order_relaxed); }

  void Open() { state_.fetch_or(kOpen, std::memory_order_release); }
  bool IsOpen() const { return (state_.load(std::memory_order_acquire) & kOpen) != 0; }
  // Some thread is inside (e.g. in a synchronous copy).
  bool Busy() const { return (state_.load(std::memory_order_relaxed) & kCountMask) != 0; }

  // Closes the gate without waiting: threads inside finish, new ones take the slow path.
  void Close() { state_.fetch_and(~kOpen, std::memory_order_acq_rel); }
  // Closes the gate and waits until every thread inside has left. Threads inside may be
  // in a synchronous copy, so this can take as long as that copy.
  void CloseAndDrain() {
    state_.fetch_and(~kOpen, std::memory_order_acq_rel);
    for (int spins = 0; (state_.load(std::memory_order_acquire) & kCountMask) != 0; ++spins) {
      if (spins < 64) {
        sched_yield();
      } else {
        struct timespec ts = {0, 50 * 1000};  // 50 us
        nanosleep(&ts, nullptr);
      }
    }
  }

  // After fork(), in the child: no thread is inside and no lease is held.
  void Reset() {
    state_.store(0, std::memory_order_relaxed);
    active_.store(false, std::memory_order_relaxed);
  }

 private:
  static constexpr uint32_t kOpen = 1u << 31;
  static constexpr uint32_t kCountMask = kOpen - 1;
  std::atomic<uint32_t> state_{0};  // kOpen | number of threads inside
  std::atomic<bool> active_{false};
};

}  // namespace gshare::shim
