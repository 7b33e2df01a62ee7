// ContextRegistry: which CUDA contexts this process has submitted work in, and on which
// device, so a release can synchronize every one of them. Also resolves the calling
// thread's current device for the gate (cached per thread, validated per call).
// Register/Find: any thread; ForEach: the lease client thread.
#pragma once

#include <atomic>

#include "driver/cuda_abi.h"
#include "mutex.h"

namespace gshare::shim {

inline constexpr int kMaxDevices = 64;

class ContextRegistry {
 public:
  static ContextRegistry& Get();

  // Device ordinal of the calling thread's current context, or -1 when no context is
  // current (the driver call will then fail on its own) or the ordinal is out of range.
  // Costs one cuCtxGetCurrent when the context is the one this thread used last.
  int CurrentDevice();

  // Calls fn(ctx) for every context seen on `device`. Reads entries_ without mu_ (so the
  // lease thread never waits on submitting threads), which the analysis cannot express:
  // entries below count_ (acquire) were published by Register's release store and stay in
  // place; a Forget or a device change made meanwhile may or may not be seen.
  template <typename Fn>
  void ForEach(int device, Fn fn) NO_THREAD_SAFETY_ANALYSIS {
    int n = count_.load(std::memory_order_acquire);
    for (int i = 0; i < n; ++i) {
      if (entries_[i].device == device && entries_[i].ctx != nullptr) fn(entries_[i].ctx);
    }
  }

  // Forgets `ctx` (cuCtxDestroy).
  void Forget(gs_cuda::CUcontext ctx) EXCLUDES(mu_);

  // In the child after fork(): contexts do not survive a fork.
  void ResetAfterFork();

 private:
  int Register(gs_cuda::CUcontext ctx) EXCLUDES(mu_);
  static constexpr int kMaxContexts = 256;
  struct Entry {
    gs_cuda::CUcontext ctx;
    int device;
  };
  Mutex mu_;  // guards changes to entries_ (appends, forgetting); ForEach reads without it
  Entry entries_[kMaxContexts] GUARDED_BY(mu_) = {};
  std::atomic<int> count_{0};  // written under mu_
};

}  // namespace gshare::shim
