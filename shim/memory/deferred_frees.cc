// cuMemFreeAsync of the swap engine's memory (deferred_frees.h).
#include "memory/deferred_frees.h"

namespace gshare::shim {
using namespace gs_cuda;

CUresult DeferredFrees::Add(CUdeviceptr ptr, CUstream stream) {
  auto* d = static_cast<Entry*>(std::malloc(sizeof(Entry)));
  CUevent e = nullptr;
  CUresult result = CUDA_ERROR_OUT_OF_MEMORY;
  if (d != nullptr) {
    result = Extras().cuEventCreate(&e, kEventDisableTiming);
    if (result == CUDA_SUCCESS) result = Extras().cuEventRecord(e, stream);
  }
  if (result == CUDA_SUCCESS) {
    *d = Entry{ptr, e, head_};
    head_ = d;
  } else {
    if (e != nullptr) Vmm()->cuEventDestroy_v2(e);
    std::free(d);
  }
  return result;
}

}  // namespace gshare::shim
