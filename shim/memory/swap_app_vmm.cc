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
#include <cstring>

#include "memory/host_pool.h"
#include "lease/lease_client.h"
#include "hooks/real_driver.h"
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

// The fields of a CUmemAllocationProp that cuMemCreate reads on Linux (not the Windows
// security attributes).
bool SameProp(const CUmemAllocationProp& a, const CUmemAllocationProp& b) {
  return a.type == b.type && a.requestedHandleTypes == b.requestedHandleTypes &&
         SameLocation(a.location, b.location) &&
         std::memcmp(&a.allocFlags, &b.allocFlags, sizeof a.allocFlags) == 0;
}

}  // namespace

SwapSpace::Region* SwapSpace::AppRegionLocked(CUmemGenericAllocationHandle h) const {
  if (!IsAppHandle(h)) return nullptr;
  uint64_t slot = AppSlot(h);
  if (slot >= static_cast<uint64_t>(app_id_capacity_)) return nullptr;
  return app_ids_[slot];
}

int SwapSpace::FirstMappingLocked(CUdeviceptr va, uint64_t size) const {
  int lo = 0, hi = map_count_;  // first mapping that ends after va
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (maps_[mid]->va + maps_[mid]->size <= va) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo < map_count_ && maps_[lo]->va < va + size ? lo : -1;
}

bool SwapSpace::LockFirstMapping(CUdeviceptr va, uint64_t size, int* first) {
  if (!On() || map_count_.load(std::memory_order_relaxed) == 0) return false;
  mu_.Lock();
  *first = FirstMappingLocked(va, size);
  if (*first >= 0) return true;
  mu_.Unlock();
  return false;
}

void SwapSpace::RemoveMappingLocked(AppMapping* m) {
  int i = FirstMappingLocked(m->va, 1);
  if (i >= 0 && maps_[i] == m) {
    std::memmove(maps_ + i, maps_ + i + 1, sizeof(AppMapping*) * (map_count_ - i - 1));
    --map_count_;
  }
  for (AppMapping** link = &m->owner->app->maps; *link != nullptr; link = &(*link)->next) {
    if (*link == m) {
      *link = m->next;
      break;
    }
  }
  std::free(m->access);
  std::free(m);
}

void SwapSpace::ForgetAppLocked(Region* r) {
  if (r->app->refs == 0 && r->app->maps == nullptr) FreeRegionLocked(r);
}

void SwapSpace::MapAppLocked(Region& r, CUmemGenericAllocationHandle real) {
  const VmmDriver& v = *Vmm();
  AppMapping* m = r.app->maps;
  while (m != nullptr) {
    AppMapping* next = m->next;
    CUresult res = v.cuMemMap(m->va, m->size, m->offset, real, 0);
    if (res != CUDA_SUCCESS) {
      Warn(
          "the application's mapping of %llu bytes at 0x%llx cannot be made (CUresult %d); "
          "it is dropped",
          static_cast<unsigned long long>(m->size), static_cast<unsigned long long>(m->va), res);
      RemoveMappingLocked(m);
    } else if (m->naccess > 0) {
      res = v.cuMemSetAccess(m->va, m->size, m->access, m->naccess);
      if (res != CUDA_SUCCESS) {
        Warn("the application's access to 0x%llx cannot be set again (CUresult %d)",
             static_cast<unsigned long long>(m->va), res);
      }
    }
    m = next;
  }
}

void SwapSpace::UnmapAppLocked(Region& r) {
  for (AppMapping* m = r.app->maps; m != nullptr; m = m->next) Vmm()->cuMemUnmap(m->va, m->size);
}

CUresult SwapSpace::CheckPropLocked(const CUmemAllocationProp& prop, uint64_t bytes) {
  for (int i = 0; i < good_prop_count_; ++i) {
    if (SameProp(good_props_[i], prop)) return CUDA_SUCCESS;
  }
  const VmmDriver& v = *Vmm();
  size_t granularity = 0;
  CUresult res =
      v.cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  if (res != CUDA_SUCCESS) return res;
  if (granularity == 0 || bytes % granularity != 0) return CUDA_ERROR_INVALID_VALUE;
  CUmemGenericAllocationHandle probe = 0;
  res = v.cuMemCreate(&probe, granularity, &prop, 0);
  if (res == CUDA_SUCCESS) v.cuMemRelease(probe);
  if (res == CUDA_ERROR_OUT_OF_MEMORY) return CUDA_SUCCESS;  // cannot tell now; not remembered
  if (res == CUDA_SUCCESS && good_prop_count_ < 8) good_props_[good_prop_count_++] = prop;
  return res;
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
  if (ctx_[device] == nullptr && ContextRegistry::Get().CurrentDevice() == device) {
    Extras().cuCtxGetCurrent(&ctx_[device]);
  }
  int slot = -1;
  for (int i = app_id_hint_; i < app_id_capacity_ && slot < 0; ++i) {
    if (app_ids_[i] == nullptr) slot = i;
  }
  if (slot < 0) {
    int cap = app_id_capacity_ == 0 ? 1024 : app_id_capacity_ * 2;
    auto* grown = static_cast<Region**>(std::realloc(app_ids_, sizeof(Region*) * cap));
    if (grown != nullptr) {
      std::memset(grown + app_id_capacity_, 0, sizeof(Region*) * (cap - app_id_capacity_));
      slot = app_id_capacity_;
      app_ids_ = grown;
      app_id_capacity_ = cap;
    }
  }
  CUresult res = CheckPropLocked(*prop, size);
  if (res == CUDA_SUCCESS && slot < 0) res = CUDA_ERROR_OUT_OF_MEMORY;
  Region* r = nullptr;
  if (res == CUDA_SUCCESS && !CanEverFitLocked(device, size)) res = CUDA_ERROR_OUT_OF_MEMORY;
  if (res == CUDA_SUCCESS) {
    app->id = kAppHandleTag | static_cast<uint64_t>(slot + 1);
    res = NewRegionLocked(device, size, app, &r);
  }
  if (res == CUDA_SUCCESS) {
    app_ids_[slot] = r;
    app_id_hint_ = slot + 1;
    *handle = app->id;
  } else {
    std::free(app);
  }
  mu_.Unlock();
  if (res == CUDA_SUCCESS) LeaseClient::Get().MemoryChanged(device);
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
  if (r != nullptr) LeaseClient::Get().MemoryChanged(-1);
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
             FirstMappingLocked(va, size) >= 0) {
    res = CUDA_ERROR_INVALID_VALUE;
  } else if ((m = static_cast<AppMapping*>(std::calloc(1, sizeof(AppMapping)))) == nullptr) {
    res = CUDA_ERROR_OUT_OF_MEMORY;
  } else if (map_count_ == map_capacity_) {
    int cap = map_capacity_ == 0 ? 1024 : map_capacity_ * 2;
    auto* grown = static_cast<AppMapping**>(std::realloc(maps_, sizeof(AppMapping*) * cap));
    if (grown == nullptr) {
      res = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
      maps_ = grown;
      map_capacity_ = cap;
    }
  }
  Chunk& c = r->chunks[0];
  if (res == CUDA_SUCCESS && c.handle != 0) res = Vmm()->cuMemMap(va, size, offset, c.handle, 0);
  if (res == CUDA_SUCCESS) {
    *m = AppMapping{va, size, offset, r, r->app->maps, 0, nullptr};
    r->app->maps = m;
    int i = map_count_;
    while (i > 0 && maps_[i - 1]->va > va) {
      maps_[i] = maps_[i - 1];
      --i;
    }
    maps_[i] = m;
    ++map_count_;
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
  for (; last < map_count_ && maps_[last]->va < end; ++last) {
    // cuMemUnmap takes whole mappings only.
    if (maps_[last]->va < va || maps_[last]->va + maps_[last]->size > end) {
      res = CUDA_ERROR_INVALID_VALUE;
    }
  }
  int n = last - first;
  auto** doomed = static_cast<AppMapping**>(std::malloc(sizeof(AppMapping*) * (n > 0 ? n : 1)));
  if (res == CUDA_SUCCESS && doomed == nullptr) res = CUDA_ERROR_OUT_OF_MEMORY;
  if (res == CUDA_SUCCESS) {
    std::memcpy(doomed, maps_ + first, sizeof(AppMapping*) * n);
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
      close_run(m->va, k);
      run = m->va + m->size;
      run_first = k + 1;
    }
    close_run(end, n);
    for (int k = 0; k < n; ++k) {
      if (doomed[k] == nullptr) continue;
      Region* owner = doomed[k]->owner;
      RemoveMappingLocked(doomed[k]);
      ForgetAppLocked(owner);
    }
  }
  std::free(doomed);
  mu_.Unlock();
  LeaseClient::Get().MemoryChanged(-1);
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
  for (int k = first; res == CUDA_SUCCESS && k < map_count_ && maps_[k]->va < end; ++k) {
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
  for (int k = first; res == CUDA_SUCCESS && k < map_count_ && maps_[k]->va < end; ++k) {
    AppMapping* m = maps_[k];
    if (m->owner->chunks[0].handle != 0) continue;  // mapped: part of the run
    CUdeviceptr from = m->va > va ? m->va : va;
    if (run < from) res = v.cuMemSetAccess(run, from - run, desc, count);
    run = m->va + m->size;
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
    if (*result == CUDA_SUCCESS && !r->app->exported) {
      r->app->exported = true;
      allocated_[r->device] -= r->size;
      LeaseClient::Get().AddDeviceBytes(r->device, static_cast<int64_t>(r->size));
    }
    if (*result == CUDA_SUCCESS) *real = r->chunks[0].handle;
  }
  mu_.Unlock();
  return r != nullptr;
}

}  // namespace gshare::shim
