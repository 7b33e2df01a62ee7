// Declarations of every exported hook (C linkage, gs_cuda types), generated from hooks.def.
// Included by the files that define or take the address of the hooks. Any thread.
#pragma once

#include "driver/cuda_abi.h"

namespace gs_cuda {
extern "C" {
#define GS_HOOK(kind, name, pfn, params, args) CUresult name params noexcept;
#include "driver/hooks.def"
#undef GS_HOOK
}
}  // namespace gs_cuda
