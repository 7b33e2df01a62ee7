// The in-flight window: a ring of events per device, used only while another job waits.
#include "lease/inflight_window.h"

#include <cstdlib>

#include "driver/context_registry.h"
#include "driver/real_driver.h"
#include "lease/event_ring.h"
#include "memory/vmm_driver.h"
#include "mutex.h"

namespace gshare::shim {
namespace {

using namespace gs_cuda;

constexpr int kFences = 4;  // W: events outstanding per device

struct Ring {
  Mutex mu;                                // held while a full window waits for its oldest fence
  CUcontext ctx GUARDED_BY(mu) = nullptr;  // the events' context; other contexts are not windowed
  CUevent events[kFences] GUARDED_BY(mu) = {};
  int head GUARDED_BY(mu) = 0;   // oldest outstanding
  int count GUARDED_BY(mu) = 0;  // outstanding
  std::atomic<uint32_t> submissions{0};
};

Ring g_rings[kMaxDevices];
std::atomic<int> g_stride{-1};  // K; 0 = window off

int Stride() {
  int k = g_stride.load(std::memory_order_relaxed);
  if (k >= 0) return k;
  const char* env = std::getenv("GSHARE_INFLIGHT_LAUNCHES");
  int launches = env != nullptr ? std::atoi(env) : 64;
  k = launches <= 0 ? 0 : (launches + kFences - 1) / kFences;
  g_stride.store(k, std::memory_order_relaxed);
  return k;
}

}  // namespace

std::atomic<bool> InflightWindow::contended_[64];

void InflightWindow::SetContended(int device, bool contended) {
  contended_[device].store(contended && Stride() > 0, std::memory_order_relaxed);
}

void InflightWindow::AfterSubmission(int device, CUstream stream, bool per_thread) {
  Ring& r = g_rings[device];
  uint32_t n = r.submissions.fetch_add(1, std::memory_order_relaxed) + 1;
  int stride = Stride();
  if (stride == 0 || n % static_cast<uint32_t>(stride) != 0) return;
  const DriverExtras& x = Extras();
  CUcontext ctx;
  if (!SubmittingContext(&ctx, &stream, per_thread)) return;
  r.mu.Lock();
  if (EnsureEvents(&r.ctx, r.events, kFences, ctx)) {
    if (r.count == kFences) {
      // Window full: wait for the oldest fence (the GPU has then at most K*(W-1) of our
      // submissions left), and reuse its event.
      x.cuEventSynchronize(r.events[r.head]);
      r.head = (r.head + 1) % kFences;
      --r.count;
    }
    CUevent e = r.events[(r.head + r.count) % kFences];
    if (x.cuEventRecord(e, stream) == CUDA_SUCCESS) ++r.count;
  }
  r.mu.Unlock();
}

// In the fork child's atfork handler: its only thread writes the rings without their locks
// (fresh ones; taking a lock is not async-signal-safe), which the analysis cannot know.
void InflightWindow::ResetAfterFork() NO_THREAD_SAFETY_ANALYSIS {
  for (int i = 0; i < kMaxDevices; ++i) {
    Ring& r = g_rings[i];
    r.mu.ReinitAfterFork();
    r.ctx = nullptr;  // the parent's events mean nothing here
    r.head = r.count = 0;
    contended_[i].store(false, std::memory_order_relaxed);
  }
}

}  // namespace gshare::shim
