// AcceptedProps: the allocation properties the driver accepted for cuMemCreate, so that the swap
// engine asks it once per distinct one (Check; SwapSpace::AppCreate). Up to kMax are kept; a
// later one is asked each time. Not synchronized: its owner's lock (SwapSpace's mu_) guards it.
// Errors: Check returns the driver's.
#pragma once

#include <cstdint>
#include <cstring>

#include "driver/cuda_abi.h"

namespace gshare::shim {

class AcceptedProps {
 public:
  static constexpr int kMax = 8;

  // Whether the driver accepts `prop` for `bytes`, asked once per distinct prop (a handle of
  // the minimum granularity, created and released): a request the engine defers must fail
  // now as the driver would (PyTorch tries fabric handles first and falls back on
  // CUDA_ERROR_NOT_PERMITTED). CUDA_ERROR_OUT_OF_MEMORY from the probe counts as accepted and
  // is not remembered. Driver calls (accepted_props.cc): needs a context current.
  gs_cuda::CUresult Check(const gs_cuda::CUmemAllocationProp& prop, uint64_t bytes);

  // Whether `prop` was accepted: one kept that equals it in the fields cuMemCreate reads on
  // Linux (not the Windows security attributes).
  bool Has(const gs_cuda::CUmemAllocationProp& prop) const {
    for (int i = 0; i < count_; ++i) {
      if (Same(props_[i], prop)) return true;
    }
    return false;
  }
  // Keeps `prop` as accepted; nothing once kMax are kept.
  void Add(const gs_cuda::CUmemAllocationProp& prop) {
    if (count_ < kMax) props_[count_++] = prop;
  }

 private:
  static bool Same(const gs_cuda::CUmemAllocationProp& a, const gs_cuda::CUmemAllocationProp& b) {
    return a.type == b.type && a.requestedHandleTypes == b.requestedHandleTypes &&
           a.location.type == b.location.type && a.location.id == b.location.id &&
           std::memcmp(&a.allocFlags, &b.allocFlags, sizeof a.allocFlags) == 0;
  }

  gs_cuda::CUmemAllocationProp props_[kMax] = {};
  int count_ = 0;
};

}  // namespace gshare::shim
