// The CUDA driver ABI as the shim and the fake driver see it: the types, constants and
// entry points they use, declared here so that neither needs the CUDA toolkit to build.
// Names and layouts follow cuda.h (CUDA 13.0); shim/driver/cuda_abi_check.cc proves they agree
// with cuda.h whenever a toolkit is installed. Plain declarations: any thread.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gs_cuda {

typedef int CUresult;  // cuda.h: enum cudaError_enum (int-sized)
typedef int CUdevice_v1;
typedef CUdevice_v1 CUdevice;
typedef unsigned int CUdeviceptr_v1;  // pre-3.2 ABI of the unsuffixed legacy exports
typedef unsigned long long CUdeviceptr_v2;
typedef CUdeviceptr_v2 CUdeviceptr;
typedef uint32_t cuuint32_t;
typedef uint64_t cuuint64_t;
typedef unsigned long long CUmemGenericAllocationHandle_v1;
typedef CUmemGenericAllocationHandle_v1 CUmemGenericAllocationHandle;

typedef struct CUctx_st* CUcontext;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef struct CUarray_st* CUarray;
typedef struct CUstream_st* CUstream;
typedef struct CUevent_st* CUevent;
typedef struct CUgraph_st* CUgraph;
typedef struct CUgraphNode_st* CUgraphNode;
typedef struct CUgraphExec_st* CUgraphExec;
typedef struct CUmemPoolHandle_st* CUmemoryPool;
typedef struct CUgreenCtx_st* CUgreenCtx;
typedef struct CUdevResourceDesc_st* CUdevResourceDesc;
typedef struct CUlib_st* CUlibrary;
typedef struct CUkern_st* CUkernel;
typedef void (*CUhostFn)(void* userData);

// Parameter blocks the shim only passes through by pointer: their layout is the driver's.
typedef struct CUDA_LAUNCH_PARAMS_st CUDA_LAUNCH_PARAMS_v1;
typedef struct CUDA_MEMCPY2D_v1_st CUDA_MEMCPY2D_v1;
typedef struct CUDA_MEMCPY2D_st CUDA_MEMCPY2D_v2;
typedef struct CUDA_MEMCPY3D_v1_st CUDA_MEMCPY3D_v1;
typedef struct CUDA_MEMCPY3D_st CUDA_MEMCPY3D_v2;
typedef struct CUDA_MEMCPY3D_PEER_st CUDA_MEMCPY3D_PEER_v1;
typedef struct CUDA_MEMCPY3D_BATCH_OP_st CUDA_MEMCPY3D_BATCH_OP_v1;
typedef struct CUmemcpyAttributes_st CUmemcpyAttributes_v1;
typedef struct CUgraphEdgeData_st CUgraphEdgeData;
typedef union CUstreamBatchMemOpParams_union CUstreamBatchMemOpParams;

typedef int CUstreamCaptureMode;               // enum CUstreamCaptureMode_enum
typedef int CUjit_option;                      // enum CUjit_option_enum
typedef int CUlibraryOption;                   // enum CUlibraryOption_enum
typedef int CUstreamCaptureStatus;             // enum CUstreamCaptureStatus_enum
typedef int CUdriverProcAddressQueryResult;    // enum CUdriverProcAddressQueryResult_enum
typedef int CUmemLocationType;                 // enum CUmemLocationType_enum
typedef int CUmemAllocationType;               // enum CUmemAllocationType_enum
typedef int CUmemAllocationHandleType;         // enum CUmemAllocationHandleType_enum
typedef int CUmemAccess_flags;                 // enum CUmemAccess_flags_enum
typedef int CUmemAllocationGranularity_flags;  // enum CUmemAllocationGranularity_flags_enum
typedef int CUmemPool_attribute;               // enum CUmemPool_attribute_enum

// Passed by value (cuMemPrefetchAsync_v2): the layout must be exact.
typedef struct CUmemLocation_st {
  CUmemLocationType type;
  int id;
} CUmemLocation_v1;
typedef CUmemLocation_v1 CUmemLocation;

typedef struct CUmemAllocationProp_st {
  CUmemAllocationType type;
  CUmemAllocationHandleType requestedHandleTypes;
  CUmemLocation location;
  void* win32HandleMetaData;
  struct {
    unsigned char compressionType;
    unsigned char gpuDirectRDMACapable;
    unsigned short usage;
    unsigned char reserved[4];
  } allocFlags;
} CUmemAllocationProp_v1;
typedef CUmemAllocationProp_v1 CUmemAllocationProp;

// cuMemSetAccess: one location and the protection it gets.
typedef struct CUmemAccessDesc_st {
  CUmemLocation location;
  CUmemAccess_flags flags;
} CUmemAccessDesc_v1;
typedef CUmemAccessDesc_v1 CUmemAccessDesc;

// Read by the gate for its stream (cuLaunchKernelEx).
typedef struct CUlaunchConfig_st {
  unsigned int gridDimX, gridDimY, gridDimZ;
  unsigned int blockDimX, blockDimY, blockDimZ;
  unsigned int sharedMemBytes;
  CUstream hStream;
  struct CUlaunchAttribute_st* attrs;
  unsigned int numAttrs;
} CUlaunchConfig;

// cuDeviceGetDevResource / cuDevSmResourceSplitByCount (CUDA driver API 6.22, "Green
// Contexts"): a resource of the device. cuda.h's CUdevResource is a 4-byte type, 92 bytes of
// padding, then a 48-byte union whose SM member starts with the SM count (144 bytes in CUDA
// 12.4-13.0); this one has the same prefix and room to spare, so a later driver that writes a
// longer one into a single element stays inside it.
typedef int CUdevResourceType;  // enum CUdevResourceType
typedef struct CUdevResource_st {
  CUdevResourceType type;
  unsigned char internal_padding[92];
  struct {
    unsigned int smCount;
    unsigned int minSmPartitionSize;
    unsigned int smCoscheduledAlignment;
    unsigned int flags;
  } sm;
  unsigned char room[144];
} CUdevResource;

// Legacy IPC memory handle (cuIpcGetMemHandle): 64 opaque bytes (CU_IPC_HANDLE_SIZE).
typedef struct CUipcMemHandle_st {
  char reserved[64];
} CUipcMemHandle_v1;

typedef struct CUuuid_st {
  char bytes[16];
} CUuuid;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
constexpr CUresult CUDA_ERROR_INVALID_CONTEXT = 201;
constexpr CUresult CUDA_ERROR_INVALID_HANDLE = 400;
constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;
constexpr CUresult CUDA_ERROR_NOT_SUPPORTED = 801;
constexpr CUresult CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900;
constexpr CUresult CUDA_ERROR_UNKNOWN = 999;

constexpr cuuint64_t CU_GET_PROC_ADDRESS_DEFAULT = 0;
constexpr cuuint64_t CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1;
constexpr cuuint64_t CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 2;

constexpr CUdriverProcAddressQueryResult CU_GET_PROC_ADDRESS_SUCCESS = 0;
constexpr CUdriverProcAddressQueryResult CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1;
constexpr CUdriverProcAddressQueryResult CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2;

constexpr CUstreamCaptureStatus CU_STREAM_CAPTURE_STATUS_NONE = 0;
constexpr CUstreamCaptureStatus CU_STREAM_CAPTURE_STATUS_ACTIVE = 1;

constexpr CUdevResourceType CU_DEV_RESOURCE_TYPE_SM = 1;
constexpr unsigned int CU_GREEN_CTX_DEFAULT_STREAM = 0x1;
constexpr unsigned int CU_STREAM_NON_BLOCKING = 0x1;

constexpr CUmemLocationType CU_MEM_LOCATION_TYPE_DEVICE = 1;
constexpr CUmemAllocationType CU_MEM_ALLOCATION_TYPE_PINNED = 1;
constexpr CUmemAllocationHandleType CU_MEM_HANDLE_TYPE_NONE = 0;
constexpr CUmemAllocationHandleType CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1;
constexpr CUmemAccess_flags CU_MEM_ACCESS_FLAGS_PROT_NONE = 0;
constexpr CUmemAccess_flags CU_MEM_ACCESS_FLAGS_PROT_READ = 1;
constexpr CUmemAccess_flags CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3;
constexpr CUmemAllocationGranularity_flags CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0;
constexpr CUmemAllocationGranularity_flags CU_MEM_ALLOC_GRANULARITY_RECOMMENDED = 1;
constexpr CUmemPool_attribute CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES = 1;
constexpr CUmemPool_attribute CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC = 2;
constexpr CUmemPool_attribute CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 3;
constexpr CUmemPool_attribute CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4;
constexpr CUmemPool_attribute CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT = 5;
constexpr CUmemPool_attribute CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH = 6;
constexpr CUmemPool_attribute CU_MEMPOOL_ATTR_USED_MEM_CURRENT = 7;
constexpr CUmemPool_attribute CU_MEMPOOL_ATTR_USED_MEM_HIGH = 8;

inline CUstream CuStreamLegacy() { return reinterpret_cast<CUstream>(0x1); }  // CU_STREAM_LEGACY
inline CUstream CuStreamPerThread() {
  return reinterpret_cast<CUstream>(0x2);
}  // CU_STREAM_PER_THREAD

}  // namespace gs_cuda
