// SwapSpace::IpcPin: legacy IPC of the engine's cuMemAlloc memory (ipc_wire.h).
#include <unistd.h>

#include "memory/memory_host.h"
#include "memory/ipc_export.h"
#include "memory/ipc_wire.h"
#include "memory/swap_space.h"
#include "memory/swap_space_internal.h"
#include "shim_log.h"

namespace gshare::shim {
using namespace swap_internal;

bool SwapSpace::IpcPin(CUdeviceptr p, CUipcMemHandle_v1* handle, CUresult* result) {
  if (!On()) return false;
  mu_.Lock();
  Region* r = regions_.Find(p);
  if (r == nullptr) {
    mu_.Unlock();
    return false;
  }
  if (handle == nullptr || r->app != nullptr) {
    *result = CUDA_ERROR_INVALID_VALUE;
  } else {
    *result = ResidentLocked(*r);  // creating its chunks settles shareable_chunks_
    if (*result == CUDA_SUCCESS && shareable_chunks_ != 1) *result = CUDA_ERROR_NOT_SUPPORTED;
  }
  int device = r->device;
  if (*result == CUDA_SUCCESS) {
    IpcWireHandle w{};
    *result = IpcExports::Get().Publish(r->base, r->nchunks, r->chunks, &w.nonce);
    if (*result == CUDA_SUCCESS) {
      MarkExportedLocked(*r);
      w.pid = static_cast<uint32_t>(getpid());
      w.device = device;
      w.base = r->base;
      w.size = r->size;
      // A slab's block is the allocation; a region's is all of it (the driver's handle too
      // names the whole allocation an interior pointer lies in).
      w.offset = r->block_shift != 0 ? (p - r->base) & ~((1ull << r->block_shift) - 1) : 0;
      *handle = EncodeIpcHandle(w);
    }
  }
  mu_.Unlock();
  if (*result == CUDA_SUCCESS) Host().MemoryChanged(device);
  return true;
}

}  // namespace gshare::shim
