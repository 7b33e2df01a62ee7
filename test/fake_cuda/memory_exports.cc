// Memory exports of the fake driver: the ALLOC/ALLOCPITCH/ALLOCMANAGED/FREE rows of
// shim/hooks.def, pinned host memory and cuMemGetInfo. Device memory is host memory (memory.h).
// Stream-ordered allocation is in pool.cc, cuMemCreate and the other VMM calls in vmm.cc.
#include <cstdlib>

#include "driver.h"
#include "fake_cuda_api.h"
#include "memory.h"
#include "pool.h"

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
  if (pPitch == nullptr || (ElementSizeBytes != 4 && ElementSizeBytes != 8 &&
                            ElementSizeBytes != 16)) {
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
  *totalBytes = total;
  *freeBytes = total - fake::UsedBytes(ctx->device());
  return CUDA_SUCCESS;
}

// Pinned host memory is plain host memory; it does not count against any device.
CUresult cuMemAllocHost_v2(void** pp, size_t bytesize) noexcept {
  fake::Context* ctx;
  if (CUresult r = fake::CheckContext(&ctx)) return r;
  if (pp == nullptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
  *pp = std::aligned_alloc(256, (bytesize + 255) / 256 * 256);
  return *pp != nullptr ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuMemFreeHost(void* p) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  std::free(p);
  return CUDA_SUCCESS;
}

}  // extern "C"
}  // namespace gs_cuda
