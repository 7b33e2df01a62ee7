// EngineDevices: the CUDA objects the swap engine works with on each device: the context it
// makes current for its own driver calls, its copy stream and the two events of its batch pipe
// (SwapSpace::BatchPipe), each found or created on first use and kept until exit. Not
// synchronized: SwapSpace's mu_ guards it (its background threads read a context without it,
// SwapSpace::ContextUnlocked). Errors: Enter returns false; what cannot be created is nullptr.
#pragma once

#include "driver/context_registry.h"
#include "driver/cuda_abi.h"

namespace gshare::shim {

class EngineDevices {
 public:
  constexpr EngineDevices() = default;
  EngineDevices(const EngineDevices&) = delete;
  EngineDevices& operator=(const EngineDevices&) = delete;

  // `device`'s context; nullptr until one is known. Set once: nullptr, then the context.
  gs_cuda::CUcontext Context(int device) const { return ctx_[device]; }
  // Takes the calling thread's current context as `device`'s unless it has one already.
  void AdoptCurrent(int device);
  // Makes `device`'s context current on the calling thread (pushed): the one it has, else the
  // first the application used there (ContextRegistry), else the primary context, kept from
  // then on. False when there is none or the push fails.
  bool Enter(int device);
  // Pops the context Enter (or a push of Context()) made current.
  static void Leave();
  // The engine's stream on `device` (non-blocking), created once; nullptr where creation failed.
  // Needs the device's context current.
  gs_cuda::CUstream Stream(int device);
  // The two batch events on `device` (timing off) into done[0..1], created once; nullptr where
  // creation failed. Needs the device's context current.
  void BatchEvents(int device, gs_cuda::CUevent done[2]);

 private:
  gs_cuda::CUcontext ctx_[kMaxDevices] = {};
  gs_cuda::CUstream stream_[kMaxDevices] = {};
  gs_cuda::CUevent batch_done_[kMaxDevices][2] = {};
};

}  // namespace gshare::shim
