// Context bookkeeping for the gate and the release synchronization.
#include "driver/context_registry.h"

#include "driver/real_driver.h"

namespace gshare::shim {
namespace {
thread_local gs_cuda::CUcontext t_ctx = nullptr;
thread_local int t_device = -1;
ContextRegistry g_registry;  // constant-initialized, trivially destructible
}  // namespace

ContextRegistry& ContextRegistry::Get() { return g_registry; }

int ContextRegistry::CurrentDevice() {
  gs_cuda::CUcontext ctx = nullptr;
  if (Extras().cuCtxGetCurrent(&ctx) != gs_cuda::CUDA_SUCCESS || ctx == nullptr) return -1;
  if (__builtin_expect(ctx == t_ctx, 1)) return t_device;
  int device = Register(ctx);
  t_ctx = ctx;
  t_device = device;
  return device;
}

int ContextRegistry::Register(gs_cuda::CUcontext ctx) {
  gs_cuda::CUdevice device = -1;
  if (Extras().cuCtxGetDevice(&device) != gs_cuda::CUDA_SUCCESS) return -1;
  if (device < 0 || device >= kMaxDevices) return -1;
  mu_.Lock();
  int n = count_.load(std::memory_order_relaxed);
  bool known = false;
  for (int i = 0; i < n; ++i) {
    if (entries_[i].ctx == ctx) {
      entries_[i].device = device;
      known = true;
    }
  }
  if (!known && n < kMaxContexts) {
    entries_[n] = {ctx, device};
    count_.store(n + 1, std::memory_order_release);
  }
  mu_.Unlock();
  return device;
}

void ContextRegistry::Forget(gs_cuda::CUcontext ctx) {
  mu_.Lock();
  int n = count_.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) {
    if (entries_[i].ctx == ctx) entries_[i].ctx = nullptr;
  }
  mu_.Unlock();
  if (t_ctx == ctx) t_ctx = nullptr;
}

void ContextRegistry::ResetAfterFork() {
  mu_.ReinitAfterFork();
  count_.store(0, std::memory_order_relaxed);
  t_ctx = nullptr;
  t_device = -1;
}

}  // namespace gshare::shim
