// InflightWindow: bounds the GPU work a lease holder keeps queued while another job waits,
// so that giving the lease back (drain + synchronize) takes milliseconds, not the length of
// a deep launch queue. Off while nobody waits: the fast path then costs one relaxed load.
// While contended, every K-th submission on a device records an event after itself; with W
// events outstanding, the submitting thread first waits for the oldest. At most about
// K*W submissions per device are queued ahead of the GPU (GSHARE_INFLIGHT_LAUNCHES, default
// 64; 0 turns the window off). Any submitting thread; reset by the fork handler.
#pragma once

#include <atomic>

#include "driver/cuda_abi.h"

namespace gshare::shim {

class InflightWindow {
 public:
  // Called by the lease thread: a DROP may come soon (another job waits) or not.
  static void SetContended(int device, bool contended);
  static bool Contended(int device) { return contended_[device].load(std::memory_order_relaxed); }
  // After a submission on `stream` (inside the gate, current context set). May block until
  // the GPU has caught up to within the window.
  static void AfterSubmission(int device, gs_cuda::CUstream stream, bool per_thread);
  static void ResetAfterFork();

 private:
  static std::atomic<bool> contended_[64];
};

}  // namespace gshare::shim
