// Memory exports of the fake driver: the ALLOC*/FREE*/MEMCREATE/MEMRELEASE rows of
// shim/hooks.def, pinned host memory and cuMemGetInfo. Device memory is host memory (memory.h);
// stream-ordered allocations happen at once and their frees when the stream reaches them.
#include <cstdlib>

#include "driver.h"
#include "fake_cuda_api.h"
#include "memory.h"

namespace gs_cuda::fake {
namespace {

CUresult Alloc(CUdeviceptr* dptr, size_t bytes) {
  Context* ctx;
  if (CUresult r = CheckContext(&ctx)) return r;
  return DeviceAlloc(ctx->device(), bytes, dptr);
}

CUresult AllocAsync(CUdeviceptr* dptr, size_t bytes, CUstream handle, bool per_thread) {
  Context* ctx;
  if (CUresult r = CheckContext(&ctx)) return r;
  Stream* s;
  if (CUresult r = ResolveStream(handle, per_thread, &s)) return r;
  return DeviceAlloc(s->context()->device(), bytes, dptr);
}

CUresult FreeAsync(CUdeviceptr dptr, CUstream handle, bool per_thread) {
  Context* ctx;
  if (CUresult r = CheckContext(&ctx)) return r;
  Stream* s;
  if (CUresult r = ResolveStream(handle, per_thread, &s)) return r;
  if (!IsDeviceAlloc(dptr)) return CUDA_ERROR_INVALID_VALUE;
  Op op;
  op.body = [dptr] { DeviceFree(dptr); };
  uint64_t ticket;
  return s->Submit(std::move(op), Stream::Mode::kInternal, &ticket);
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
  return fake::DeviceFree(dptr);
}

CUresult cuMemAllocAsync(CUdeviceptr_v2* dptr, size_t bytesize, CUstream hStream) noexcept {
  return fake::AllocAsync(dptr, bytesize, hStream, false);
}
CUresult cuMemAllocAsync_ptsz(CUdeviceptr_v2* dptr, size_t bytesize, CUstream hStream) noexcept {
  return fake::AllocAsync(dptr, bytesize, hStream, true);
}
CUresult cuMemAllocFromPoolAsync(CUdeviceptr_v2* dptr, size_t bytesize, CUmemoryPool,
                                 CUstream hStream) noexcept {
  return fake::AllocAsync(dptr, bytesize, hStream, false);
}
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr_v2* dptr, size_t bytesize, CUmemoryPool,
                                      CUstream hStream) noexcept {
  return fake::AllocAsync(dptr, bytesize, hStream, true);
}
CUresult cuMemFreeAsync(CUdeviceptr_v2 dptr, CUstream hStream) noexcept {
  return fake::FreeAsync(dptr, hStream, false);
}
CUresult cuMemFreeAsync_ptsz(CUdeviceptr_v2 dptr, CUstream hStream) noexcept {
  return fake::FreeAsync(dptr, hStream, true);
}

CUresult cuMemCreate(CUmemGenericAllocationHandle_v1* handle, size_t size,
                     const CUmemAllocationProp_v1* prop, unsigned long long) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  if (prop == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = fake::CheckDevice(prop->location.id)) return r;
  return fake::HandleCreate(prop->location.id, size, handle);
}

CUresult cuMemRelease(CUmemGenericAllocationHandle_v1 handle) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  return fake::HandleRelease(handle);
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
