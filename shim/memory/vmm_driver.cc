// Resolves VmmDriver once with glibc's dlsym on the already loaded libcuda.
#include "memory/vmm_driver.h"

#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <type_traits>

#include "driver/context_registry.h"
#include "driver/real_driver.h"

namespace gshare::shim {
namespace {

VmmDriver g_vmm;
bool g_vmm_ok = false;
pthread_once_t g_vmm_once = PTHREAD_ONCE_INIT;

void LoadVmm() {
  if (!LoadRealDriver()) return;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return;
  bool ok = true;
  auto get = [lib, &ok](auto& slot, const char* name) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(RealDlsym(lib, name));
    if (slot == nullptr) ok = false;
  };
  get(g_vmm.cuMemAddressReserve, "cuMemAddressReserve");
  get(g_vmm.cuMemAddressFree, "cuMemAddressFree");
  get(g_vmm.cuMemCreate, "cuMemCreate");
  get(g_vmm.cuMemRelease, "cuMemRelease");
  get(g_vmm.cuMemMap, "cuMemMap");
  get(g_vmm.cuMemUnmap, "cuMemUnmap");
  get(g_vmm.cuMemSetAccess, "cuMemSetAccess");
  get(g_vmm.cuMemGetAllocationGranularity, "cuMemGetAllocationGranularity");
  get(g_vmm.cuMemHostAlloc, "cuMemHostAlloc");
  get(g_vmm.cuMemFreeHost, "cuMemFreeHost");
  g_vmm.cuMemHostRegister_v2 = reinterpret_cast<decltype(g_vmm.cuMemHostRegister_v2)>(
      RealDlsym(lib, "cuMemHostRegister_v2"));
  get(g_vmm.cuStreamCreate, "cuStreamCreate");
  get(g_vmm.cuStreamSynchronize, "cuStreamSynchronize");
  get(g_vmm.cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync_v2");
  get(g_vmm.cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync_v2");
  get(g_vmm.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  get(g_vmm.cuMemGetInfo_v2, "cuMemGetInfo_v2");
  get(g_vmm.cuDeviceTotalMem_v2, "cuDeviceTotalMem_v2");
  get(g_vmm.cuMemAlloc_v2, "cuMemAlloc_v2");
  get(g_vmm.cuMemFree_v2, "cuMemFree_v2");
  get(g_vmm.cuEventQuery, "cuEventQuery");
  get(g_vmm.cuEventDestroy_v2, "cuEventDestroy_v2");
  auto optional = [lib](auto& slot, const char* name) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(RealDlsym(lib, name));
  };
  optional(g_vmm.cuMemExportToShareableHandle, "cuMemExportToShareableHandle");
  optional(g_vmm.cuMemImportFromShareableHandle, "cuMemImportFromShareableHandle");
  dlclose(lib);
  g_vmm_ok = ok;
}

}  // namespace

const VmmDriver* Vmm() {
  pthread_once(&g_vmm_once, LoadVmm);
  return g_vmm_ok ? &g_vmm : nullptr;
}

uint64_t DeviceTotalBytes(int device) {
  static std::atomic<uint64_t> totals[kMaxDevices];
  if (device < 0 || device >= kMaxDevices) return 0;
  uint64_t known = totals[device].load(std::memory_order_relaxed);
  if (known != 0) return known;
  size_t total = 0;
  const VmmDriver* v = Vmm();
  if (v == nullptr || v->cuDeviceTotalMem_v2(&total, device) != CUDA_SUCCESS) return 0;
  totals[device].store(total, std::memory_order_relaxed);
  return total;
}

}  // namespace gshare::shim
