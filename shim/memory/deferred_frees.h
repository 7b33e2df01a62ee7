// DeferredFrees: the swap engine's cuMemFreeAsync calls, each waiting for an event recorded on
// its stream; once the event has completed, Reap hands the pointer to the engine to free. A
// list of malloc'd entries. Not synchronized: SwapSpace's mu_ guards it. Errors: Add returns
// the driver's (CUDA_ERROR_OUT_OF_MEMORY when no entry can be allocated) and keeps nothing.
#pragma once

#include <cstdlib>

#include "driver/cuda_abi.h"
#include "driver/real_driver.h"
#include "memory/vmm_driver.h"

namespace gshare::shim {

class DeferredFrees {
 public:
  constexpr DeferredFrees() = default;
  DeferredFrees(const DeferredFrees&) = delete;
  DeferredFrees& operator=(const DeferredFrees&) = delete;

  // Records an event on `stream`, after which `ptr` may be freed.
  gs_cuda::CUresult Add(gs_cuda::CUdeviceptr ptr, gs_cuda::CUstream stream);
  // Calls release(ptr) for each entry whose event is no longer pending (it completed, or the
  // query failed; with `wait`, after waiting for each), then destroys the event and forgets
  // the entry.
  template <class Release>
  void Reap(bool wait, Release release) {
    Entry** link = &head_;
    while (*link != nullptr) {
      Entry* d = *link;
      gs_cuda::CUresult q =
          wait ? Extras().cuEventSynchronize(d->event) : Vmm()->cuEventQuery(d->event);
      if (q == gs_cuda::CUDA_ERROR_NOT_READY) {
        link = &d->next;
        continue;
      }
      release(d->ptr);
      Vmm()->cuEventDestroy_v2(d->event);
      *link = d->next;
      std::free(d);
    }
  }

 private:
  struct Entry {
    gs_cuda::CUdeviceptr ptr;
    gs_cuda::CUevent event;
    Entry* next;
  };
  Entry* head_ = nullptr;  // newest first
};

}  // namespace gshare::shim
