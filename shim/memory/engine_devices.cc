// The swap engine's contexts, streams and batch events (engine_devices.h).
#include "memory/engine_devices.h"

#include "driver/real_driver.h"
#include "memory/vmm_driver.h"

namespace gshare::shim {
using namespace gs_cuda;

void EngineDevices::AdoptCurrent(int device) {
  if (ctx_[device] == nullptr) Extras().cuCtxGetCurrent(&ctx_[device]);
}

bool EngineDevices::Enter(int device) {
  CUcontext ctx = ctx_[device];
  if (ctx == nullptr) {
    ContextRegistry::Get().ForEach(device, [&ctx](CUcontext c) {
      if (ctx == nullptr) ctx = c;
    });
  }
  if (ctx == nullptr && Vmm()->cuDevicePrimaryCtxRetain(&ctx, device) != CUDA_SUCCESS) {
    return false;
  }
  ctx_[device] = ctx;
  return Extras().cuCtxPushCurrent_v2(ctx) == CUDA_SUCCESS;
}

void EngineDevices::Leave() {
  CUcontext popped;
  Extras().cuCtxPopCurrent_v2(&popped);
}

CUstream EngineDevices::Stream(int device) {
  if (stream_[device] == nullptr) Vmm()->cuStreamCreate(&stream_[device], kStreamNonBlocking);
  return stream_[device];
}

void EngineDevices::BatchEvents(int device, CUevent done[2]) {
  for (int i = 0; i < 2; ++i) {
    CUevent& e = batch_done_[device][i];
    if (e == nullptr && Extras().cuEventCreate(&e, kEventDisableTiming) != CUDA_SUCCESS) {
      e = nullptr;
    }
    done[i] = e;
  }
}

}  // namespace gshare::shim
