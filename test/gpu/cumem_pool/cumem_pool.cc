// The engine-shaped sleep/wake allocator (cumem_pool.h has the contract).
#include "cumem_pool.h"

#include <dlfcn.h>

#include <cstdio>
#include <mutex>
#include <vector>

#include "driver/cuda_abi.h"

namespace {

using namespace gs_cuda;

struct Driver {
  CUresult (*get_granularity)(size_t*, const CUmemAllocationProp*,
                              CUmemAllocationGranularity_flags) = nullptr;
  CUresult (*address_reserve)(CUdeviceptr*, size_t, size_t, CUdeviceptr,
                              unsigned long long) = nullptr;
  CUresult (*address_free)(CUdeviceptr, size_t) = nullptr;
  CUresult (*create)(CUmemGenericAllocationHandle*, size_t, const CUmemAllocationProp*,
                     unsigned long long) = nullptr;
  CUresult (*release)(CUmemGenericAllocationHandle) = nullptr;
  CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                  unsigned long long) = nullptr;
  CUresult (*unmap)(CUdeviceptr, size_t) = nullptr;
  CUresult (*set_access)(CUdeviceptr, size_t, const CUmemAccessDesc*, size_t) = nullptr;
  CUresult (*ctx_synchronize)() = nullptr;
  CUresult (*copy_dtoh)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*copy_htod)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*alloc_host)(void**, size_t) = nullptr;
  CUresult (*free_host)(void*) = nullptr;
  bool loaded = false;
};

struct Allocation {
  CUdeviceptr ptr = 0;
  size_t size = 0;  // rounded up to the granularity
  int device = 0;
  int tag = 0;
  CUmemGenericAllocationHandle handle = 0;
  bool awake = false;
  void* saved = nullptr;  // pinned host copy, made at the first offloading sleep
  bool has_saved = false;
};

std::mutex g_mu;
Driver g_drv;
std::vector<Allocation> g_allocations;
int g_tag = 0;
char g_error[96] = "";

template <typename F>
bool Resolve(void* lib, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  return *out != nullptr;
}

bool LoadDriver() {
  if (g_drv.loaded) return true;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::snprintf(g_error, sizeof g_error, "dlopen libcuda.so.1 failed");
    return false;
  }
  Driver d;
  bool ok = Resolve(lib, "cuMemGetAllocationGranularity", &d.get_granularity) &&
            Resolve(lib, "cuMemAddressReserve", &d.address_reserve) &&
            Resolve(lib, "cuMemAddressFree", &d.address_free) &&
            Resolve(lib, "cuMemCreate", &d.create) && Resolve(lib, "cuMemRelease", &d.release) &&
            Resolve(lib, "cuMemMap", &d.map) && Resolve(lib, "cuMemUnmap", &d.unmap) &&
            Resolve(lib, "cuMemSetAccess", &d.set_access) &&
            Resolve(lib, "cuCtxSynchronize", &d.ctx_synchronize) &&
            Resolve(lib, "cuMemcpyDtoH_v2", &d.copy_dtoh) &&
            Resolve(lib, "cuMemcpyHtoD_v2", &d.copy_htod) &&
            Resolve(lib, "cuMemAllocHost_v2", &d.alloc_host) &&
            Resolve(lib, "cuMemFreeHost", &d.free_host);
  if (!ok) {
    std::snprintf(g_error, sizeof g_error, "dlsym: a driver export is missing");
    return false;
  }
  d.loaded = true;
  g_drv = d;
  return true;
}

CUresult Check(CUresult rc, const char* call) {
  if (rc != CUDA_SUCCESS) std::snprintf(g_error, sizeof g_error, "%s: %d", call, rc);
  return rc;
}

CUmemAllocationProp DeviceProp(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  return prop;
}

// Creates a handle for `a`, maps it at a.ptr and gives its device read-write access. On failure
// nothing of it is left behind.
CUresult CreateAndMap(Allocation& a) {
  const CUmemAllocationProp prop = DeviceProp(a.device);
  CUmemGenericAllocationHandle h = 0;
  CUresult rc = Check(g_drv.create(&h, a.size, &prop, 0), "cuMemCreate");
  if (rc != CUDA_SUCCESS) return rc;
  rc = Check(g_drv.map(a.ptr, a.size, 0, h, 0), "cuMemMap");
  if (rc != CUDA_SUCCESS) {
    g_drv.release(h);
    return rc;
  }
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  rc = Check(g_drv.set_access(a.ptr, a.size, &access, 1), "cuMemSetAccess");
  if (rc != CUDA_SUCCESS) {
    g_drv.unmap(a.ptr, a.size);
    g_drv.release(h);
    return rc;
  }
  a.handle = h;
  a.awake = true;
  return CUDA_SUCCESS;
}

CUresult UnmapAndRelease(Allocation& a) {
  CUresult rc = Check(g_drv.unmap(a.ptr, a.size), "cuMemUnmap");
  if (rc != CUDA_SUCCESS) return rc;
  rc = Check(g_drv.release(a.handle), "cuMemRelease");
  a.handle = 0;
  a.awake = false;
  return rc;
}

}  // namespace

extern "C" void* gs_cumem_alloc(ssize_t size, int device, void* /*stream*/) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (size <= 0 || !LoadDriver()) return nullptr;
  const CUmemAllocationProp prop = DeviceProp(device);
  size_t granularity = 0;
  if (Check(g_drv.get_granularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
            "cuMemGetAllocationGranularity") != CUDA_SUCCESS ||
      granularity == 0)
    return nullptr;
  Allocation a;
  a.size = (static_cast<size_t>(size) + granularity - 1) / granularity * granularity;
  a.device = device;
  a.tag = g_tag;
  if (Check(g_drv.address_reserve(&a.ptr, a.size, granularity, 0, 0), "cuMemAddressReserve") !=
      CUDA_SUCCESS)
    return nullptr;
  if (CreateAndMap(a) != CUDA_SUCCESS) {
    g_drv.address_free(a.ptr, a.size);
    return nullptr;
  }
  g_allocations.push_back(a);
  return reinterpret_cast<void*>(a.ptr);
}

extern "C" void gs_cumem_free(void* ptr, ssize_t /*size*/, int /*device*/, void* /*stream*/) {
  std::lock_guard<std::mutex> lock(g_mu);
  const auto p = reinterpret_cast<CUdeviceptr>(ptr);
  for (auto it = g_allocations.begin(); it != g_allocations.end(); ++it) {
    if (it->ptr != p) continue;
    if (it->awake) UnmapAndRelease(*it);
    Check(g_drv.address_free(it->ptr, it->size), "cuMemAddressFree");
    if (it->saved != nullptr) g_drv.free_host(it->saved);
    g_allocations.erase(it);
    return;
  }
}

extern "C" void gs_cumem_set_tag(int tag) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_tag = tag;
}

extern "C" int gs_cumem_sleep(unsigned offload_tags) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!LoadDriver()) return CUDA_ERROR_NOT_INITIALIZED;
  CUresult rc = Check(g_drv.ctx_synchronize(), "cuCtxSynchronize");
  if (rc != CUDA_SUCCESS) return rc;
  for (Allocation& a : g_allocations) {
    if (!a.awake) continue;
    a.has_saved = false;
    if ((offload_tags >> a.tag) & 1u) {
      if (a.saved == nullptr &&
          (rc = Check(g_drv.alloc_host(&a.saved, a.size), "cuMemAllocHost")) != CUDA_SUCCESS)
        return rc;
      if ((rc = Check(g_drv.copy_dtoh(a.saved, a.ptr, a.size), "cuMemcpyDtoH")) != CUDA_SUCCESS)
        return rc;
      a.has_saved = true;
    }
    if ((rc = UnmapAndRelease(a)) != CUDA_SUCCESS) return rc;
  }
  return CUDA_SUCCESS;
}

extern "C" int gs_cumem_wake(void) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!LoadDriver()) return CUDA_ERROR_NOT_INITIALIZED;
  for (Allocation& a : g_allocations) {
    if (a.awake) continue;
    CUresult rc = CreateAndMap(a);
    if (rc != CUDA_SUCCESS) return rc;
    if (a.has_saved &&
        (rc = Check(g_drv.copy_htod(a.ptr, a.saved, a.size), "cuMemcpyHtoD")) != CUDA_SUCCESS)
      return rc;
  }
  return CUDA_SUCCESS;
}

extern "C" unsigned long long gs_cumem_bytes(unsigned tags, int awake_only) {
  std::lock_guard<std::mutex> lock(g_mu);
  unsigned long long sum = 0;
  for (const Allocation& a : g_allocations)
    if (((tags >> a.tag) & 1u) && (a.awake || awake_only == 0)) sum += a.size;
  return sum;
}

extern "C" const char* gs_cumem_error(void) { return g_error; }
