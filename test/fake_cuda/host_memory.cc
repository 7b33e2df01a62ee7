// Pinned host memory of the fake: cuMemAllocHost_v2, cuMemHostAlloc, cuMemFreeHost,
// cuMemHostRegister_v2, cuMemHostUnregister and cuMemHostGetDevicePointer_v2. An allocation is
// its own anonymous mmap (page-aligned, counted against no device); "pinning" it, or a
// registered range, costs FAKE_CUDA_PIN_US_PER_MIB microseconds per MiB of sleep, like
// page-locking on a real system. Copies to and from it are ordinary host copies. Any thread
// (one mutex).
#include <sys/mman.h>

#include <chrono>
#include <iterator>
#include <map>
#include <mutex>
#include <thread>

#include "driver.h"
#include "fake_cuda_api.h"

namespace gs_cuda::fake {
namespace {

struct HostState {
  std::mutex mu;                           // guards everything below
  std::map<uintptr_t, size_t> blocks;      // start -> bytes, live allocations
  std::map<uintptr_t, size_t> registered;  // start -> bytes, registered ranges
};

HostState& State() {
  static HostState* s = new HostState;  // leaked, see driver.h
  return *s;
}

CUresult HostAlloc(void** pp, size_t bytes, unsigned int flags) {
  Context* ctx;
  if (CUresult r = CheckContext(&ctx)) return r;
  constexpr unsigned int kKnown =
      CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
  if (pp == nullptr || bytes == 0 || (flags & ~kKnown) != 0) return CUDA_ERROR_INVALID_VALUE;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
  uint64_t us = GetSettings().pin_us_per_mib * bytes / (1u << 20);
  if (us > 0) std::this_thread::sleep_for(std::chrono::microseconds(us));
  HostState& st = State();
  {
    std::lock_guard<std::mutex> lock(st.mu);
    st.blocks[reinterpret_cast<uintptr_t>(p)] = bytes;
  }
  *pp = p;
  return CUDA_SUCCESS;
}

CUresult HostFree(void* p) {
  if (CUresult r = CheckInit()) return r;
  size_t bytes;
  {
    HostState& st = State();
    std::lock_guard<std::mutex> lock(st.mu);
    auto it = st.blocks.find(reinterpret_cast<uintptr_t>(p));
    if (it == st.blocks.end()) return CUDA_ERROR_INVALID_VALUE;
    bytes = it->second;
    st.blocks.erase(it);
  }
  munmap(p, bytes);
  return CUDA_SUCCESS;
}

CUresult Register(void* p, size_t bytes, unsigned int flags) {
  Context* ctx;
  if (CUresult r = CheckContext(&ctx)) return r;
  constexpr unsigned int kKnown = 0x01 | 0x02 | 0x04 | 0x08;  // PORTABLE DEVICEMAP IOMEMORY RO
  if (p == nullptr || bytes == 0 || (flags & ~kKnown) != 0) return CUDA_ERROR_INVALID_VALUE;
  uint64_t us = GetSettings().pin_us_per_mib * bytes / (1u << 20);
  if (us > 0) std::this_thread::sleep_for(std::chrono::microseconds(us));
  HostState& st = State();
  std::lock_guard<std::mutex> lock(st.mu);
  uintptr_t at = reinterpret_cast<uintptr_t>(p);
  auto next = st.registered.lower_bound(at);
  if (next != st.registered.end() && next->first < at + bytes) {
    return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  }
  if (next != st.registered.begin() && std::prev(next)->first + std::prev(next)->second > at) {
    return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
  }
  st.registered[at] = bytes;
  return CUDA_SUCCESS;
}

CUresult Unregister(void* p) {
  if (CUresult r = CheckInit()) return r;
  HostState& st = State();
  std::lock_guard<std::mutex> lock(st.mu);
  if (st.registered.erase(reinterpret_cast<uintptr_t>(p)) == 0) {
    return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
  }
  return CUDA_SUCCESS;
}

// The device address of pinned host memory is its host address (unified addressing).
CUresult DevicePointer(CUdeviceptr* out, void* p, unsigned int flags) {
  Context* ctx;
  if (CUresult r = CheckContext(&ctx)) return r;
  if (out == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  uintptr_t at = reinterpret_cast<uintptr_t>(p);
  HostState& st = State();
  std::lock_guard<std::mutex> lock(st.mu);
  auto it = st.blocks.upper_bound(at);
  if (it == st.blocks.begin()) return CUDA_ERROR_INVALID_VALUE;
  --it;
  if (at >= it->first + it->second) return CUDA_ERROR_INVALID_VALUE;
  *out = static_cast<CUdeviceptr>(at);
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace gs_cuda::fake

namespace gs_cuda {
extern "C" {

CUresult cuMemAllocHost_v2(void** pp, size_t bytesize) noexcept {
  return fake::HostAlloc(pp, bytesize, 0);
}

CUresult cuMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags) noexcept {
  return fake::HostAlloc(pp, bytesize, Flags);
}

// CUDA_ERROR_INVALID_VALUE for memory that cuMemAllocHost/cuMemHostAlloc did not return.
CUresult cuMemFreeHost(void* p) noexcept { return fake::HostFree(p); }

CUresult cuMemHostRegister_v2(void* p, size_t bytesize, unsigned int Flags) noexcept {
  return fake::Register(p, bytesize, Flags);
}

CUresult cuMemHostUnregister(void* p) noexcept { return fake::Unregister(p); }

CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr_v2* pdptr, void* p, unsigned int Flags) noexcept {
  return fake::DevicePointer(pdptr, p, Flags);
}

}  // extern "C"
}  // namespace gs_cuda
