// Compile-time proof that shim/driver/cuda_abi.h and every row of hooks.def agree with the CUDA
// toolkit's cuda.h / cudaTypedefs.h. Built (never linked) only where a toolkit exists.
// __CUDA_API_VERSION_INTERNAL exposes the typedefs of the legacy (pre-3.2) exports too.
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstddef>
#include <type_traits>

#include "driver/cuda_abi.h"

#define GS_HOOK(kind, name, pfn, params, args) \
  static_assert(std::is_same_v<pfn, CUresult(CUDAAPI*) params>, "signature of " #name);
#include "driver/hooks.def"
#undef GS_HOOK

#define GS_SAME_LAYOUT(T) \
  static_assert(sizeof(T) == sizeof(gs_cuda::T) && alignof(T) == alignof(gs_cuda::T), #T)
GS_SAME_LAYOUT(CUmemLocation);
GS_SAME_LAYOUT(CUmemAllocationProp);
GS_SAME_LAYOUT(CUmemAccessDesc);
GS_SAME_LAYOUT(CUmemAccess_flags);
GS_SAME_LAYOUT(CUmemAllocationGranularity_flags);
GS_SAME_LAYOUT(CUmemPool_attribute);
GS_SAME_LAYOUT(CUlaunchConfig);
GS_SAME_LAYOUT(CUuuid);
GS_SAME_LAYOUT(CUipcMemHandle_v1);
GS_SAME_LAYOUT(CUdeviceptr);
GS_SAME_LAYOUT(CUresult);
static_assert(offsetof(CUlaunchConfig, hStream) == offsetof(gs_cuda::CUlaunchConfig, hStream));
static_assert(offsetof(CUmemAllocationProp, location) ==
              offsetof(gs_cuda::CUmemAllocationProp, location));
static_assert(offsetof(CUmemAccessDesc, flags) == offsetof(gs_cuda::CUmemAccessDesc, flags));
static_assert(sizeof(CUdevResource) <= sizeof(gs_cuda::CUdevResource));
static_assert(offsetof(CUdevResource, sm) == offsetof(gs_cuda::CUdevResource, sm));
static_assert(offsetof(CUdevSmResource, smCount) == 0);
static_assert(offsetof(CUmemLocation, id) == offsetof(gs_cuda::CUmemLocation, id));

#define GS_SAME_VALUE(C) static_assert(static_cast<long long>(C) == gs_cuda::C, #C)
GS_SAME_VALUE(CUDA_SUCCESS);
GS_SAME_VALUE(CUDA_ERROR_INVALID_VALUE);
GS_SAME_VALUE(CUDA_ERROR_OUT_OF_MEMORY);
GS_SAME_VALUE(CUDA_ERROR_NOT_INITIALIZED);
GS_SAME_VALUE(CUDA_ERROR_NO_DEVICE);
GS_SAME_VALUE(CUDA_ERROR_INVALID_DEVICE);
GS_SAME_VALUE(CUDA_ERROR_INVALID_CONTEXT);
GS_SAME_VALUE(CUDA_ERROR_INVALID_HANDLE);
GS_SAME_VALUE(CUDA_ERROR_NOT_FOUND);
GS_SAME_VALUE(CUDA_ERROR_NOT_READY);
GS_SAME_VALUE(CUDA_ERROR_NOT_SUPPORTED);
GS_SAME_VALUE(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
GS_SAME_VALUE(CUDA_ERROR_UNKNOWN);
GS_SAME_VALUE(CU_GET_PROC_ADDRESS_DEFAULT);
GS_SAME_VALUE(CU_GET_PROC_ADDRESS_LEGACY_STREAM);
GS_SAME_VALUE(CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
GS_SAME_VALUE(CU_GET_PROC_ADDRESS_SUCCESS);
GS_SAME_VALUE(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
GS_SAME_VALUE(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
GS_SAME_VALUE(CU_STREAM_CAPTURE_STATUS_NONE);
GS_SAME_VALUE(CU_STREAM_CAPTURE_STATUS_ACTIVE);
GS_SAME_VALUE(CU_MEM_LOCATION_TYPE_DEVICE);
GS_SAME_VALUE(CU_DEV_RESOURCE_TYPE_SM);
GS_SAME_VALUE(CU_GREEN_CTX_DEFAULT_STREAM);
GS_SAME_VALUE(CU_STREAM_NON_BLOCKING);
GS_SAME_VALUE(CU_MEM_ALLOCATION_TYPE_PINNED);
GS_SAME_VALUE(CU_MEM_HANDLE_TYPE_NONE);
GS_SAME_VALUE(CU_MEM_ACCESS_FLAGS_PROT_NONE);
GS_SAME_VALUE(CU_MEM_ACCESS_FLAGS_PROT_READ);
GS_SAME_VALUE(CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
GS_SAME_VALUE(CU_MEM_ALLOC_GRANULARITY_MINIMUM);
GS_SAME_VALUE(CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
GS_SAME_VALUE(CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES);
GS_SAME_VALUE(CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC);
GS_SAME_VALUE(CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES);
GS_SAME_VALUE(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD);
GS_SAME_VALUE(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
GS_SAME_VALUE(CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH);
GS_SAME_VALUE(CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
GS_SAME_VALUE(CU_MEMPOOL_ATTR_USED_MEM_HIGH);
