// What the two windows on queued work (inflight_window.h, priority_window.h) share: the
// submitting thread's context and stream, and their rings of events made once in one context.
// Any submitting thread; EnsureEvents under the caller's ring lock.
#pragma once

#include "driver/cuda_abi.h"
#include "driver/real_driver.h"
#include "memory/vmm_driver.h"

namespace gshare::shim {

// The calling thread's current context (false when it has none) and the stream a submission
// on `stream` used (the per-thread default stream for a _ptsz/_ptds call on stream 0), through
// the driver table `x`.
inline bool SubmittingContext(const DriverExtras& x, gs_cuda::CUcontext* ctx,
                              gs_cuda::CUstream* stream, bool per_thread) {
  *ctx = nullptr;
  if (x.cuCtxGetCurrent(ctx) != gs_cuda::CUDA_SUCCESS || *ctx == nullptr) return false;
  if (*stream == nullptr && per_thread) *stream = gs_cuda::CuStreamPerThread();
  return true;
}
inline bool SubmittingContext(gs_cuda::CUcontext* ctx, gs_cuda::CUstream* stream, bool per_thread) {
  return SubmittingContext(Extras(), ctx, stream, per_thread);
}

// Makes the ring's `n` events in `ctx` the first time (*owner null), with timing when asked
// (cuEventElapsedTime between them; without, a record costs less); true when the ring
// belongs to `ctx` (work of other contexts is not windowed).
inline bool EnsureEvents(const DriverExtras& x, gs_cuda::CUcontext* owner, gs_cuda::CUevent* events,
                         int n, gs_cuda::CUcontext ctx, bool timing = false) {
  if (*owner == nullptr) {
    bool ok = true;
    const unsigned flags = timing ? 0u : kEventDisableTiming;
    for (int i = 0; i < n; ++i) {
      ok = ok && x.cuEventCreate(&events[i], flags) == gs_cuda::CUDA_SUCCESS;
    }
    if (ok) *owner = ctx;
  }
  return *owner == ctx;
}
inline bool EnsureEvents(gs_cuda::CUcontext* owner, gs_cuda::CUevent* events, int n,
                         gs_cuda::CUcontext ctx, bool timing = false) {
  return EnsureEvents(Extras(), owner, events, n, ctx, timing);
}

}  // namespace gshare::shim
