#include "memory/managed_space.h"

#include <cstdlib>
#include <cstring>

#include "memory/memory_engine.h"
#include "driver/real_driver.h"
#include "shim_log.h"
#include "memory/vmm_driver.h"
#include "memory/mono_clock.h"

namespace gshare::shim {
namespace {
constexpr unsigned kAttachGlobal = 0x1;         // cuda.h CU_MEM_ATTACH_GLOBAL
constexpr CUmemLocationType kLocationHost = 2;  // cuda.h CU_MEM_LOCATION_TYPE_HOST

using AllocManagedFn = CUresult (*)(CUdeviceptr*, size_t, unsigned);
using PrefetchFn = CUresult (*)(CUdeviceptr, size_t, CUmemLocation, unsigned, CUstream);
}  // namespace

ManagedSpace g_managed_space;
ManagedSpace& ManagedSpace::Get() { return g_managed_space; }

bool ManagedSpace::On() { return Engine().kind() == proto::MemoryEngine::kManaged; }

CUresult ManagedSpace::Alloc(int device, uint64_t bytes, CUdeviceptr* out) {
  auto alloc = reinterpret_cast<AllocManagedFn>(RealFunction(kHook_cuMemAllocManaged));
  CUresult r = alloc(out, bytes, kAttachGlobal);
  if (r != CUDA_SUCCESS) return r;
  mu_.Lock();
  if (ctx_[device] == nullptr) Extras().cuCtxGetCurrent(&ctx_[device]);
  if (count_ == capacity_) {
    int cap = capacity_ == 0 ? 256 : capacity_ * 2;
    auto* grown = static_cast<Range*>(std::realloc(ranges_, sizeof(Range) * cap));
    if (grown == nullptr) {
      mu_.Unlock();
      Vmm()->cuMemFree_v2(*out);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    ranges_ = grown;
    capacity_ = cap;
  }
  ranges_[count_++] = Range{*out, bytes, device};
  mu_.Unlock();
  return CUDA_SUCCESS;
}

void ManagedSpace::Forget(CUdeviceptr p) {
  MutexLock lock(mu_);
  for (int i = 0; i < count_; ++i) {
    if (ranges_[i].ptr == p) {
      ranges_[i] = ranges_[--count_];
      break;
    }
  }
}

bool ManagedSpace::Owns(CUdeviceptr p) {
  MutexLock lock(mu_);
  for (int i = 0; i < count_; ++i) {
    if (p >= ranges_[i].ptr && p - ranges_[i].ptr < ranges_[i].bytes) return true;
  }
  return false;
}

uint64_t ManagedSpace::Prefetch(int device, bool to_gpu, uint64_t* ns) {
  *ns = 0;
  if (device < 0 || device >= kMaxDevices) return 0;
  mu_.Lock();
  uint64_t moved = 0;
  CUcontext ctx = ctx_[device];
  if (ctx != nullptr && count_ > 0 && Extras().cuCtxPushCurrent_v2(ctx) == CUDA_SUCCESS) {
    int64_t start = MonoNowNs();
    if (stream_[device] == nullptr) Vmm()->cuStreamCreate(&stream_[device], kStreamNonBlocking);
    auto prefetch = reinterpret_cast<PrefetchFn>(RealFunction(kHook_cuMemPrefetchAsync_v2));
    CUmemLocation where{};
    where.type = to_gpu ? CU_MEM_LOCATION_TYPE_DEVICE : kLocationHost;
    where.id = to_gpu ? device : 0;
    for (int i = 0; i < count_; ++i) {
      const Range& r = ranges_[i];
      if (r.device != device) continue;
      if (prefetch(r.ptr, r.bytes, where, 0, stream_[device]) == CUDA_SUCCESS) moved += r.bytes;
    }
    Vmm()->cuStreamSynchronize(stream_[device]);
    CUcontext popped;
    Extras().cuCtxPopCurrent_v2(&popped);
    on_gpu_[device] = to_gpu;
    *ns = static_cast<uint64_t>(MonoNowNs() - start);
  }
  mu_.Unlock();
  return moved;
}

uint64_t ManagedSpace::Allocated(int device) {
  mu_.Lock();
  uint64_t n = 0;
  for (int i = 0; i < count_; ++i) {
    if (ranges_[i].device == device) n += ranges_[i].bytes;
  }
  mu_.Unlock();
  return n;
}

uint64_t ManagedSpace::Resident(int device) {
  uint64_t n = Allocated(device);
  mu_.Lock();
  bool on = on_gpu_[device];
  mu_.Unlock();
  return on ? n : 0;
}

}  // namespace gshare::shim
