// The swap engine's side of memory the application maps itself (CUDA Driver API, "Virtual
// Memory Management": cuMemCreate, cuMemMap, cuMemSetAccess, ...). PyTorch's expandable
// segments create 20 MiB (or 2 MiB) handles, map them one after another into one big
// reservation and set access over the new range in one call; JAX's allocator can do the same.
//
// The application gets a virtual id (kAppHandleTag | slot) instead of the driver's handle, so
// the id stays valid while the engine releases the physical memory at eviction and creates a
// new handle at swap-in. Each id's memory is a region of one chunk whose base is the engine's
// own mapping of the handle (read-write for its device): evictions and swap-ins copy through
// it, whatever the application mapped. The engine remembers every mapping the application made
// (address, size, offset) and the access it set there, and re-applies both after each
// re-creation. While the handle is not resident, calls that touch it are answered from that
// record and the driver never sees them:
//  - cuMemMap records the mapping (mapped at the next swap-in);
//  - cuMemUnmap / cuMemSetAccess split the range: the driver gets the parts it has mapped;
//  - cuMemGetAccess answers from the record;
//  - cuMemRelease drops a reference; the memory goes once no reference and no mapping is left,
//    as with the driver (an application may release right after mapping).
// A mapping recorded while not resident that the driver then refuses (a bad address) is
// dropped at swap-in with one line on stderr. cuMemExportToShareableHandle pins the handle:
// another process may map it, so it stays resident and counts as fixed memory.
// Any thread; every call takes the engine's lock.
#include <cstdlib>

#include "memory/host_pool.h"
#include "memory/memory_host.h"
#include "driver/real_driver.h"
#include "shim_log.h"
#include "memory/swap_space.h"
#include "memory/swap_space_internal.h"
#include "memory/vmm_driver.h"

namespace gshare::shim {
using namespace swap_internal;

namespace {

bool SameLocation(const CUmemLocation& a, const CUmemLocation& b) {
  return a.type == b.type && a.id == b.id;
}

}  // namespace

SwapSpace::Region* SwapSpace::AppRegionLocked(CUmemGenericAllocationHandle h) const {
  return IsAppHandle(h) ? app_ids_.Find(h & ~kAppHandleTag) : nullptr;
}

bool SwapSpace::LockFirstMapping(CUdeviceptr va, uint64_t size, int* first) {
  if (!On() || MapCountUnlocked() == 0) return false;
  mu_.Lock();
  *first = maps_.First(va, size);
  if (*first >= 0) return true;
  mu_.Unlock();
  return false;
}

void SwapSpace::ForgetAppLocked(Region* r) {
  if (r->app->refs == 0 && r->app->maps == nullptr) FreeRegionLocked(r);
}

bool SwapSpace::AppCreate(CUmemGenericAllocationHandle* handle, size_t size,
                          const CUmemAllocationProp* prop, unsigned long long flags,
                          CUresult* result) {
  if (handle == nullptr || prop == nullptr || flags != 0 || !On()) return false;
  if (prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
      prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE) {
    return false;
  }
  int device = prop->location.id;
  if (device < 0 || device >= kMaxDevices || size == 0 || size % kGranule != 0 ||
      size > HostPool::kBlockBytes) {
    return false;
  }
  auto* app = static_cast<AppHandle*>(std::calloc(1, sizeof(AppHandle)));
  if (app == nullptr) return false;
  app->prop = *prop;
  app->refs = 1;
  mu_.Lock();
  if (devices_.Context(device) == nullptr && ContextRegistry::Get().CurrentDevice() == device) {
    devices_.AdoptCurrent(device);
  }
  // The number is claimed before NewRegionLocked, which lets mu_ go while it waits for room:
  // another cuMemCreate meanwhile must not be given the same one.
  const uint64_t number = app_ids_.NextFree();  // 0: none
  if (number != 0) app_ids_.Claim(number);
  CUresult res = app_props_.Check(*prop, size);
  if (res == CUDA_SUCCESS && number == 0) res = CUDA_ERROR_OUT_OF_MEMORY;
  Region* r = nullptr;
  if (res == CUDA_SUCCESS && !CanEverFit(device, size, allocated_[device])) {
    res = CUDA_ERROR_OUT_OF_MEMORY;
  }
  if (res == CUDA_SUCCESS) {
    app->id = kAppHandleTag | number;
    res = NewRegionLocked(device, size, app, &r);
  }
  if (res == CUDA_SUCCESS) {
    app_ids_.Bind(number, r);
    *handle = app->id;
  } else {
    if (number != 0) app_ids_.Unbind(number);
    std::free(app);
  }
  mu_.Unlock();
  if (res == CUDA_SUCCESS) Host().MemoryChanged(device);
  *result = res;
  return true;
}

bool SwapSpace::AppRelease(CUmemGenericAllocationHandle h, CUresult* result) {
  mu_.Lock();
  Region* r = AppRegionLocked(h);
  if (r != nullptr) {
    *result = CUDA_ERROR_INVALID_VALUE;
    if (r->app->refs > 0) {
      --r->app->refs;
      *result = CUDA_SUCCESS;
      ForgetAppLocked(r);
    }
  }
  mu_.Unlock();
  if (r != nullptr) Host().MemoryChanged(-1);
  return r != nullptr;
}

bool SwapSpace::AppMap(CUdeviceptr va, size_t size, size_t offset, CUmemGenericAllocationHandle h,
                       unsigned long long flags, CUresult* result) {
  mu_.Lock();
  Region* r = AppRegionLocked(h);
  if (r == nullptr) {
    mu_.Unlock();
    return false;
  }
  CUresult res = CUDA_SUCCESS;
  AppMapping* m = nullptr;
  if (r->app->refs <= 0) {
    res = CUDA_ERROR_INVALID_HANDLE;
  } else if (flags != 0 || size == 0 || va % kGranule != 0 || size % kGranule != 0 ||
             offset % kGranule != 0 || offset > r->size || size > r->size - offset ||
             maps_.First(va, size) >= 0) {
    res = CUDA_ERROR_INVALID_VALUE;
  } else if ((m = static_cast<AppMapping*>(std::calloc(1, sizeof(AppMapping)))) == nullptr) {
    res = CUDA_ERROR_OUT_OF_MEMORY;
  } else if (!maps_.Reserve()) {
    res = CUDA_ERROR_OUT_OF_MEMORY;
  }
  Chunk& c = r->chunks[0];
  if (res == CUDA_SUCCESS && c.handle != 0) res = Vmm()->cuMemMap(va, size, offset, c.handle, 0);
  if (res == CUDA_SUCCESS) {
    *m = AppMapping{va, size, offset, r, nullptr, 0, nullptr};
    maps_.Add(m);
  } else {
    std::free(m);
  }
  mu_.Unlock();
  *result = res;
  return true;
}

bool SwapSpace::AppProperties(CUmemAllocationProp* prop, CUmemGenericAllocationHandle h,
                              CUresult* result) {
  mu_.Lock();
  Region* r = AppRegionLocked(h);
  if (r != nullptr) {
    *result = CUDA_ERROR_INVALID_VALUE;
    if (prop != nullptr && r->app->refs > 0) {
      *prop = r->app->prop;
      *result = CUDA_SUCCESS;
    }
  }
  mu_.Unlock();
  return r != nullptr;
}

bool SwapSpace::AppUnmap(CUdeviceptr va, size_t size, CUresult* result) {
  int first;
  if (!LockFirstMapping(va, size, &first)) return false;
  const VmmDriver& v = *Vmm();
  CUdeviceptr end = va + size;
  int last = first;  // one past the last mapping in the range
  CUresult res = CUDA_SUCCESS;
  for (; last < maps_.count() && maps_[last]->base < end; ++last) {
    // cuMemUnmap takes whole mappings only.
    if (maps_[last]->base < va || maps_[last]->base + maps_[last]->size > end) {
      res = CUDA_ERROR_INVALID_VALUE;
    }
  }
  int n = last - first;
  auto** doomed = static_cast<AppMapping**>(std::malloc(sizeof(AppMapping*) * (n > 0 ? n : 1)));
  if (res == CUDA_SUCCESS && doomed == nullptr) res = CUDA_ERROR_OUT_OF_MEMORY;
  if (res == CUDA_SUCCESS) {
    for (int k = 0; k < n; ++k) doomed[k] = maps_[first + k];
    // The driver unmaps the runs it has mapped: the range less the mappings it does not know.
    // A run's mappings are forgotten when the driver unmapped the run; unknown ones always.
    CUdeviceptr run = va;
    int run_first = 0;
    auto close_run = [&](CUdeviceptr to, int upto) {
      CUresult rr = run < to ? v.cuMemUnmap(run, to - run) : CUDA_SUCCESS;
      if (rr == CUDA_SUCCESS) return;
      if (res == CUDA_SUCCESS) res = rr;
      for (int k = run_first; k < upto; ++k) doomed[k] = nullptr;  // still mapped: kept
    };
    for (int k = 0; k < n; ++k) {
      AppMapping* m = doomed[k];
      if (m->owner->chunks[0].handle != 0) continue;  // mapped: part of the run
      close_run(m->base, k);
      run = m->base + m->size;
      run_first = k + 1;
    }
    close_run(end, n);
    for (int k = 0; k < n; ++k) {
      if (doomed[k] == nullptr) continue;
      Region* owner = doomed[k]->owner;
      maps_.Remove(doomed[k]);
      ForgetAppLocked(owner);
    }
  }
  std::free(doomed);
  mu_.Unlock();
  Host().MemoryChanged(-1);
  *result = res;
  return true;
}

bool SwapSpace::AppSetAccess(CUdeviceptr va, size_t size, const CUmemAccessDesc* desc, size_t count,
                             CUresult* result) {
  int first;
  if (!LockFirstMapping(va, size, &first)) return false;
  CUresult res = CUDA_SUCCESS;
  if (desc == nullptr || count == 0 || count > static_cast<size_t>(kMaxDevices)) {
    res = CUDA_ERROR_INVALID_VALUE;
  }
  CUdeviceptr end = va + size;
  // Remembered for every mapping in the range, merged by location (each call sets the
  // access of the locations it names and leaves the others as they were).
  for (int k = first; res == CUDA_SUCCESS && k < maps_.count() && maps_[k]->base < end; ++k) {
    AppMapping* m = maps_[k];
    auto* grown = static_cast<CUmemAccessDesc*>(
        std::realloc(m->access, sizeof(CUmemAccessDesc) * (m->naccess + count)));
    if (grown == nullptr) {
      res = CUDA_ERROR_OUT_OF_MEMORY;
      break;
    }
    m->access = grown;
    for (size_t d = 0; d < count; ++d) {
      int at = 0;
      while (at < m->naccess && !SameLocation(m->access[at].location, desc[d].location)) ++at;
      m->access[at] = desc[d];
      if (at == m->naccess) ++m->naccess;
    }
  }
  // The driver gets the runs it has mapped.
  const VmmDriver& v = *Vmm();
  CUdeviceptr run = va;
  for (int k = first; res == CUDA_SUCCESS && k < maps_.count() && maps_[k]->base < end; ++k) {
    AppMapping* m = maps_[k];
    if (m->owner->chunks[0].handle != 0) continue;  // mapped: part of the run
    CUdeviceptr from = m->base > va ? m->base : va;
    if (run < from) res = v.cuMemSetAccess(run, from - run, desc, count);
    run = m->base + m->size;
  }
  if (res == CUDA_SUCCESS && run < end) res = v.cuMemSetAccess(run, end - run, desc, count);
  mu_.Unlock();
  *result = res;
  return true;
}

bool SwapSpace::AppGetAccess(unsigned long long* flags, const CUmemLocation* location,
                             CUdeviceptr va, CUresult* result) {
  int i;
  if (!LockFirstMapping(va, 1, &i)) return false;
  AppMapping* m = maps_[i];
  bool answer = m->owner->chunks[0].handle == 0;  // else the driver knows
  if (answer) {
    *result = CUDA_ERROR_INVALID_VALUE;
    if (flags != nullptr && location != nullptr) {
      *flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
      for (int d = 0; d < m->naccess; ++d) {
        if (SameLocation(m->access[d].location, *location)) *flags = m->access[d].flags;
      }
      *result = CUDA_SUCCESS;
    }
  }
  mu_.Unlock();
  return answer;
}

bool SwapSpace::AppRetain(CUmemGenericAllocationHandle* h, void* addr, CUresult* result) {
  int i;
  if (!LockFirstMapping(reinterpret_cast<CUdeviceptr>(addr), 1, &i)) return false;
  *result = CUDA_ERROR_INVALID_VALUE;
  if (h != nullptr) {
    AppHandle* app = maps_[i]->owner->app;
    ++app->refs;
    *h = app->id;
    *result = CUDA_SUCCESS;
  }
  mu_.Unlock();
  return true;
}

bool SwapSpace::AppPin(CUmemGenericAllocationHandle h, CUmemGenericAllocationHandle* real,
                       CUresult* result) {
  mu_.Lock();
  Region* r = AppRegionLocked(h);
  if (r != nullptr) {
    *result = r->app->refs > 0 ? ResidentLocked(*r) : CUDA_ERROR_INVALID_HANDLE;
    if (*result == CUDA_SUCCESS) MarkExportedLocked(*r);
    if (*result == CUDA_SUCCESS) *real = r->chunks[0].handle;
  }
  mu_.Unlock();
  return r != nullptr;
}

}  // namespace gshare::shim
