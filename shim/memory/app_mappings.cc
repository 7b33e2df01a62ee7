// The application's mappings, made and unmapped again (app_mappings.h).
#include "memory/app_mappings.h"

#include "memory/vmm_driver.h"
#include "shim_log.h"

namespace gshare::shim {
using namespace gs_cuda;

void AppMappings::MapAll(AppHandle& app, CUmemGenericAllocationHandle real) {
  const VmmDriver& v = *Vmm();
  AppMapping* m = app.maps;
  while (m != nullptr) {
    AppMapping* next = m->next;
    CUresult res = v.cuMemMap(m->base, m->size, m->offset, real, 0);
    if (res != CUDA_SUCCESS) {
      Warn(
          "the application's mapping of %llu bytes at 0x%llx cannot be made (CUresult %d); "
          "it is dropped",
          static_cast<unsigned long long>(m->size), static_cast<unsigned long long>(m->base), res);
      Remove(m);
    } else if (m->naccess > 0) {
      res = v.cuMemSetAccess(m->base, m->size, m->access, m->naccess);
      if (res != CUDA_SUCCESS) {
        Warn("the application's access to 0x%llx cannot be set again (CUresult %d)",
             static_cast<unsigned long long>(m->base), res);
      }
    }
    m = next;
  }
}

void AppMappings::UnmapAll(const AppHandle& app) const {
  for (AppMapping* m = app.maps; m != nullptr; m = m->next) Vmm()->cuMemUnmap(m->base, m->size);
}

}  // namespace gshare::shim
