// Stream-ordered memory pools of the fake (pool.cc). Any thread.
#pragma once

#include "driver/cuda_abi.h"

namespace gs_cuda::fake {

// cuMemFree of a pool allocation: returns it to its pool now. CUDA_ERROR_INVALID_VALUE when p is
// a block a pool keeps cached (already freed); CUDA_ERROR_NOT_FOUND when no pool knows p.
CUresult PoolFreeNow(CUdeviceptr p);

}  // namespace gs_cuda::fake
