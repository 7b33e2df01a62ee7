// The C entry points of the fake driver's virtual memory management (cuMemCreate,
// cuMemAddressReserve, cuMemMap, ...); vmm.cc has their state and semantics.
#include "driver.h"
#include "fake_cuda_api.h"
#include "vmm.h"

namespace gs_cuda {
extern "C" {

CUresult cuMemCreate(CUmemGenericAllocationHandle_v1* handle, size_t size,
                     const CUmemAllocationProp_v1* prop, unsigned long long flags) noexcept {
  return fake::Create(handle, size, prop, flags);
}

CUresult cuMemRelease(CUmemGenericAllocationHandle_v1 handle) noexcept {
  return fake::Release(handle);
}

CUresult cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                       CUmemAllocationGranularity_flags option) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  if (granularity == nullptr || !fake::ValidProp(prop)) return CUDA_ERROR_INVALID_VALUE;
  if (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
      option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *granularity = fake::kGranularity;
  return CUDA_SUCCESS;
}

CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long) noexcept {
  return fake::Reserve(ptr, size, alignment, addr);
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) noexcept {
  return fake::AddressFree(ptr, size);
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags) noexcept {
  return fake::Map(ptr, size, offset, handle, flags);
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) noexcept { return fake::Unmap(ptr, size); }

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc,
                        size_t count) noexcept {
  return fake::SetAccess(ptr, size, desc, count);
}

CUresult cuMemGetAccess(unsigned long long* flags, const CUmemLocation* location,
                        CUdeviceptr ptr) noexcept {
  return fake::GetAccess(flags, location, ptr);
}

CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* addr) noexcept {
  return fake::Retain(handle, addr);
}

CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop,
                                                CUmemGenericAllocationHandle handle) noexcept {
  return fake::Properties(prop, handle);
}

CUresult cuMemExportToShareableHandle(void* shareable, CUmemGenericAllocationHandle handle,
                                      CUmemAllocationHandleType type,
                                      unsigned long long flags) noexcept {
  return fake::Export(shareable, handle, type, flags);
}

CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle, void* shareable,
                                        CUmemAllocationHandleType type) noexcept {
  return fake::Import(handle, shareable, type);
}

}  // extern "C"
}  // namespace gs_cuda
