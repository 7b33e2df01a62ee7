// ContextRegistry: which CUDA contexts this process has submitted work in, and on which
// device, so a release can synchronize every one of them. Also resolves the calling
// thread's current device for the gate (cached per thread, validated per call).
// Register/Find: any thread; ForEach: the lease client thread.
#pragma once

#include <pthread.h>

#include <atomic>

#include "hooks/cuda_abi.h"

namespace gshare::shim {

inline constexpr int kMaxDevices = 64;

class ContextRegistry {
 public:
  static ContextRegistry& Get();

  // Device ordinal of the calling thread's current context, or -1 when no context is
  // current (the driver call will then fail on its own) or the ordinal is out of range.
  // Costs one cuCtxGetCurrent when the context is the one this thread used last.
  int CurrentDevice();

  // Calls fn(ctx) for every context seen on `device`.
  template <typename Fn>
  void ForEach(int device, Fn fn) {
    int n = count_.load(std::memory_order_acquire);
    for (int i = 0; i < n; ++i) {
      if (entries_[i].device == device && entries_[i].ctx != nullptr) fn(entries_[i].ctx);
    }
  }

  // Forgets `ctx` (cuCtxDestroy).
  void Forget(gs_cuda::CUcontext ctx);

  // In the child after fork(): contexts do not survive a fork.
  void ResetAfterFork();

 private:
  int Register(gs_cuda::CUcontext ctx);
  static constexpr int kMaxContexts = 256;
  struct Entry {
    gs_cuda::CUcontext ctx;
    int device;
  };
  Entry entries_[kMaxContexts] = {};
  std::atomic<int> count_{0};
  pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;  // guards appends to entries_
};

}  // namespace gshare::shim
