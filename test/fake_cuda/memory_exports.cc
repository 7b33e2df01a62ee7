// Memory exports of the fake driver: the ALLOC/ALLOCPITCH/ALLOCMANAGED/FREE/IPCEXPORT rows of
// shim/driver/hooks.def, cuMemGetInfo and cuMemGetAddressRange. Device memory is host memory
// (memory.h). Stream-ordered allocation is in pool.cc, cuMemCreate and the other VMM calls in
// vmm.cc, pinned host memory in host_memory.cc.
#include <cstring>

#include "driver.h"
#include "fake_cuda_api.h"
#include "memory.h"
#include "pool.h"
#include "vmm.h"

namespace gs_cuda::fake {
namespace {

CUresult Alloc(CUdeviceptr* dptr, size_t bytes) {
  Context* ctx;
  if (CUresult r = CheckContext(&ctx)) return r;
  return DeviceAlloc(ctx->device(), bytes, dptr);
}

}  // namespace
}  // namespace gs_cuda::fake

namespace gs_cuda {
extern "C" {

CUresult cuMemAlloc_v2(CUdeviceptr_v2* dptr, size_t bytesize) noexcept {
  return fake::Alloc(dptr, bytesize);
}

CUresult cuMemAllocPitch_v2(CUdeviceptr_v2* dptr, size_t* pPitch, size_t WidthInBytes,
                            size_t Height, unsigned int ElementSizeBytes) noexcept {
  if (pPitch == nullptr ||
      (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  size_t pitch = (WidthInBytes + 255) / 256 * 256;
  CUresult r = fake::Alloc(dptr, pitch * Height);
  if (r == CUDA_SUCCESS) *pPitch = pitch;
  return r;
}

CUresult cuMemAllocManaged(CUdeviceptr_v2* dptr, size_t bytesize, unsigned int) noexcept {
  return fake::Alloc(dptr, bytesize);
}

CUresult cuMemFree_v2(CUdeviceptr_v2 dptr) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  if (dptr == 0) return CUDA_SUCCESS;
  CUresult r = fake::PoolFreeNow(dptr);  // a stream-ordered allocation freed synchronously
  return r == CUDA_ERROR_NOT_FOUND ? fake::DeviceFree(dptr) : r;
}

CUresult cuMemGetInfo_v2(size_t* freeBytes, size_t* totalBytes) noexcept {
  fake::Context* ctx;
  if (CUresult r = fake::CheckContext(&ctx)) return r;
  if (freeBytes == nullptr || totalBytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  uint64_t total = fake::GetSettings().mem_bytes;
  // used may exceed total: a process sharing the device file may have a larger
  // FAKE_CUDA_MEM_BYTES.
  uint64_t used = fake::UsedBytes(ctx->device());
  *totalBytes = total;
  *freeBytes = used < total ? total - used : 0;
  return CUDA_SUCCESS;
}

// The allocation that holds dptr: a cuMemAlloc/pool block (its requested size) or a cuMemMap
// mapping. CUDA_ERROR_NOT_FOUND for any other address. Either output may be null.
CUresult cuMemGetAddressRange_v2(CUdeviceptr_v2* pbase, size_t* psize,
                                 CUdeviceptr_v2 dptr) noexcept {
  fake::Context* ctx;
  if (CUresult r = fake::CheckContext(&ctx)) return r;
  CUdeviceptr base = 0;
  size_t size = 0;
  uintptr_t mapped = 0;
  if (fake::MappedRange(static_cast<uintptr_t>(dptr), &mapped, &size)) {
    base = static_cast<CUdeviceptr>(mapped);
  } else if (!fake::DeviceAllocRange(dptr, &base, &size)) {
    return CUDA_ERROR_NOT_FOUND;
  }
  if (pbase != nullptr) *pbase = base;
  if (psize != nullptr) *psize = size;
  return CUDA_SUCCESS;
}

// As the driver: a handle for the base of a cuMemAlloc allocation (the fake's handle holds the
// address); CUDA_ERROR_INVALID_VALUE for anything else, VMM mappings included.
CUresult cuIpcGetMemHandle(CUipcMemHandle_v1* pHandle, CUdeviceptr_v2 dptr) noexcept {
  fake::Context* ctx;
  if (CUresult r = fake::CheckContext(&ctx)) return r;
  CUdeviceptr base = 0;
  size_t size = 0;
  if (pHandle == nullptr || !fake::DeviceAllocRange(dptr, &base, &size) || base != dptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *pHandle = {};
  std::memcpy(pHandle->reserved, &base, sizeof base);
  return CUDA_SUCCESS;
}

// The fake's cuMemAlloc memory is private to its process, so a driver's legacy handle cannot
// be opened elsewhere: not modelled (the shim's own handles for swap-engine memory never
// reach these).
CUresult cuIpcOpenMemHandle(CUdeviceptr_v2*, CUipcMemHandle_v1, unsigned int) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  return CUDA_ERROR_NOT_SUPPORTED;
}
CUresult cuIpcOpenMemHandle_v2(CUdeviceptr_v2*, CUipcMemHandle_v1, unsigned int) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  return CUDA_ERROR_NOT_SUPPORTED;
}
CUresult cuIpcCloseMemHandle(CUdeviceptr_v2) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  return CUDA_ERROR_INVALID_VALUE;
}

}  // extern "C"
}  // namespace gs_cuda
