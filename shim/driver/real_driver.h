// RealDriver: the real libcuda entry points behind every hook, the hook tables generated
// from hooks.def (ids, names, wrappers) and the reverse map from a driver pointer to the
// hook of the same export. Loaded once, lazily, from the first call that needs it; every
// accessor is lock-free afterwards. Any thread; not for unsafe contexts except Wrapper()
// and HookOfName(), which touch only static tables.
#pragma once

#include "driver/cuda_abi.h"

namespace gshare::shim {

using namespace gs_cuda;

enum HookId : int {
#define GS_HOOK(kind, name, pfn, params, args) kHook_##name,
#include "driver/hooks.def"
#undef GS_HOOK
  kNumHooks
};

// Driver functions the shim calls itself and does not wrap.
struct DriverExtras {
  CUresult (*cuCtxGetCurrent)(CUcontext*) = nullptr;
  CUresult (*cuCtxGetDevice)(CUdevice*) = nullptr;
  CUresult (*cuCtxPushCurrent_v2)(CUcontext) = nullptr;
  CUresult (*cuCtxPopCurrent_v2)(CUcontext*) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuStreamIsCapturing)(CUstream, CUstreamCaptureStatus*) = nullptr;
  CUresult (*cuDeviceGetUuid)(CUuuid*, CUdevice) = nullptr;
  CUresult (*cuEventCreate)(CUevent*, unsigned) = nullptr;
  CUresult (*cuEventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent) = nullptr;
  CUresult (*cuEventQuery)(CUevent) = nullptr;
  // Optional (nullptr when the driver lacks it): the priority window's cost samples only.
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent) = nullptr;
  // Optional: the SM partition of a process that yields under MPS (lease/sm_partition.h);
  // all or none are used.
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned) = nullptr;
  CUresult (*cuDeviceGetDevResource)(CUdevice, CUdevResource*, CUdevResourceType) = nullptr;
  CUresult (*cuDevSmResourceSplitByCount)(CUdevResource*, unsigned*, const CUdevResource*,
                                          CUdevResource*, unsigned, unsigned) = nullptr;
  CUresult (*cuDevResourceGenerateDesc)(CUdevResourceDesc*, CUdevResource*, unsigned) = nullptr;
  CUresult (*cuGreenCtxCreate)(CUgreenCtx*, CUdevResourceDesc, CUdevice, unsigned) = nullptr;
  CUresult (*cuGreenCtxStreamCreate)(CUstream*, CUgreenCtx, unsigned, int) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr;
};

// glibc's own dlsym (found with dlvsym, so the shim's dlsym hook is bypassed).
void* RealDlsym(void* handle, const char* name);

// Loads libcuda.so.1 and resolves every hook and extra. Idempotent and thread-safe.
// Returns false when no driver can be loaded (then every hook returns
// CUDA_ERROR_NOT_INITIALIZED, as a missing driver would).
bool LoadRealDriver();

// The real function behind hook `id`, or nullptr when the driver lacks that export.
// Loads the driver on first use.
void* RealFunction(HookId id);

// Extras; valid after LoadRealDriver() returned true.
const DriverExtras& Extras();

// The hook whose real export is `fn`, or -1. Valid after LoadRealDriver().
int HookOfPointer(const void* fn);

// Static tables (safe anywhere).
const char* HookName(int id);
void* HookWrapper(int id);
int HookOfName(const char* name);  // -1 when `name` is not hooked
bool HookIsGated(int id);

}  // namespace gshare::shim
