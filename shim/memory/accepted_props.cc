// AcceptedProps::Check: the driver's probe (accepted_props.h).
#include "memory/accepted_props.h"

#include "memory/vmm_driver.h"

namespace gshare::shim {
using namespace gs_cuda;

CUresult AcceptedProps::Check(const CUmemAllocationProp& prop, uint64_t bytes) {
  if (Has(prop)) return CUDA_SUCCESS;
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
  if (res == CUDA_SUCCESS) Add(prop);
  return res;
}

}  // namespace gshare::shim
