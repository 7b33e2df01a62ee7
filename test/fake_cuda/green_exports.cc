// Green contexts of the fake (CUDA driver API 6.22, the calls the shim's SM partition makes):
// a device has FAKE_CUDA_SMS SMs (default 132); a split rounds the count up to 8 (the SM
// granularity of an H100/H200); a green context is its device and SM count, and a stream made
// on it (cuGreenCtxStreamCreate, CU_STREAM_NON_BLOCKING required as by CUDA) is an ordinary
// stream of the device's primary context whose ops the log names "<export>@sm<N>". Its kernels
// take as long as anywhere else: the fake shows where work ran, not how fast. Descriptors and
// green contexts are never freed (cuGreenCtxDestroy is not exported). Any thread.
#include "driver.h"
#include "fake_cuda_api.h"
#include "stream.h"

namespace gs_cuda::fake {
namespace {

constexpr unsigned kSmGranularity = 8;

struct GreenDesc {
  unsigned sms;
};
struct GreenContext {
  CUdevice dev;
  unsigned sms;
};

}  // namespace
}  // namespace gs_cuda::fake

namespace gs_cuda {
extern "C" {

CUresult cuDeviceGetDevResource(CUdevice device, CUdevResource* resource,
                                CUdevResourceType type) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  if (CUresult r = fake::CheckDevice(device)) return r;
  if (resource == nullptr || type != CU_DEV_RESOURCE_TYPE_SM) return CUDA_ERROR_INVALID_VALUE;
  *resource = CUdevResource{};
  resource->type = CU_DEV_RESOURCE_TYPE_SM;
  resource->sm.smCount = fake::GetSettings().sms;
  resource->sm.minSmPartitionSize = fake::kSmGranularity;
  resource->sm.smCoscheduledAlignment = fake::kSmGranularity;
  return CUDA_SUCCESS;
}

CUresult cuDevSmResourceSplitByCount(CUdevResource* result, unsigned int* nbGroups,
                                     const CUdevResource* input, CUdevResource* remaining,
                                     unsigned int useFlags, unsigned int minCount) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  if (nbGroups == nullptr || input == nullptr || input->type != CU_DEV_RESOURCE_TYPE_SM ||
      useFlags != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const unsigned g = fake::kSmGranularity;
  const unsigned each = minCount < g ? g : (minCount + g - 1) / g * g;
  unsigned groups = input->sm.smCount / each;
  if (result != nullptr && groups > *nbGroups) groups = *nbGroups;
  if (groups == 0) return CUDA_ERROR_INVALID_VALUE;
  *nbGroups = groups;
  if (result == nullptr) return CUDA_SUCCESS;  // only the count was asked
  for (unsigned i = 0; i < groups; ++i) {
    result[i] = *input;
    result[i].sm.smCount = each;
  }
  if (remaining != nullptr) {
    *remaining = *input;
    remaining->sm.smCount = input->sm.smCount - groups * each;
  }
  return CUDA_SUCCESS;
}

CUresult cuDevResourceGenerateDesc(CUdevResourceDesc* phDesc, CUdevResource* resources,
                                   unsigned int nbResources) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  if (phDesc == nullptr || resources == nullptr || nbResources != 1 ||
      resources->type != CU_DEV_RESOURCE_TYPE_SM || resources->sm.smCount == 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *phDesc = reinterpret_cast<CUdevResourceDesc>(new fake::GreenDesc{resources->sm.smCount});
  return CUDA_SUCCESS;
}

CUresult cuGreenCtxCreate(CUgreenCtx* phCtx, CUdevResourceDesc desc, CUdevice dev,
                          unsigned int flags) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  if (CUresult r = fake::CheckDevice(dev)) return r;
  if (phCtx == nullptr || desc == nullptr || (flags & ~CU_GREEN_CTX_DEFAULT_STREAM) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const unsigned sms = reinterpret_cast<const fake::GreenDesc*>(desc)->sms;
  *phCtx = reinterpret_cast<CUgreenCtx>(new fake::GreenContext{dev, sms});
  return CUDA_SUCCESS;
}

CUresult cuGreenCtxStreamCreate(CUstream* phStream, CUgreenCtx greenCtx, unsigned int flags,
                                int) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  if (phStream == nullptr || greenCtx == nullptr || flags != CU_STREAM_NON_BLOCKING) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const auto* g = reinterpret_cast<const fake::GreenContext*>(greenCtx);
  fake::Context* ctx = fake::PrimaryContext(g->dev);
  if (ctx == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  fake::Stream* s = ctx->CreateStream();
  if (s == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  s->set_sms(g->sms);
  fake::AddHandle(s, fake::HandleKind::kStream);
  *phStream = reinterpret_cast<CUstream>(s);
  return CUDA_SUCCESS;
}

}  // extern "C"
}  // namespace gs_cuda
