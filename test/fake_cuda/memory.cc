#include "memory.h"

#include <cstdlib>
#include <mutex>
#include <unordered_map>

#include "driver.h"

namespace gs_cuda::fake {
namespace {

constexpr size_t kAlign = 256;  // what cudaMalloc promises

struct Block {
  size_t bytes;
  int device;
};

struct MemoryState {
  std::mutex mu;  // guards everything below
  std::unordered_map<CUdeviceptr, Block> allocs;
  uint64_t used[kMaxDevices] = {};
};

MemoryState& State() {
  static MemoryState* s = new MemoryState;  // leaked, see driver.h
  return *s;
}

// REQUIRES: st.mu held.
bool Fits(MemoryState& st, int device, size_t bytes) {
  uint64_t total = GetSettings().mem_bytes;
  return bytes <= total && st.used[device] <= total - bytes;
}

}  // namespace

CUresult DeviceAlloc(int device, size_t bytes, CUdeviceptr* out) {
  if (bytes == 0 || out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (bytes > GetSettings().mem_bytes) return CUDA_ERROR_OUT_OF_MEMORY;
  size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  MemoryState& st = State();
  {
    std::lock_guard<std::mutex> lock(st.mu);
    if (!Fits(st, device, rounded)) return CUDA_ERROR_OUT_OF_MEMORY;
    st.used[device] += rounded;  // reserve before the malloc, outside the lock
  }
  void* p = std::aligned_alloc(kAlign, rounded);
  std::lock_guard<std::mutex> lock(st.mu);
  if (p == nullptr) {
    st.used[device] -= rounded;
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  CUdeviceptr d = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p));
  st.allocs[d] = Block{rounded, device};
  *out = d;
  return CUDA_SUCCESS;
}

CUresult DeviceFree(CUdeviceptr p) {
  MemoryState& st = State();
  {
    std::lock_guard<std::mutex> lock(st.mu);
    auto it = st.allocs.find(p);
    if (it == st.allocs.end()) return CUDA_ERROR_INVALID_VALUE;
    st.used[it->second.device] -= it->second.bytes;
    st.allocs.erase(it);
  }
  std::free(reinterpret_cast<void*>(static_cast<uintptr_t>(p)));
  return CUDA_SUCCESS;
}

bool IsDeviceAlloc(CUdeviceptr p) {
  MemoryState& st = State();
  std::lock_guard<std::mutex> lock(st.mu);
  return st.allocs.count(p) != 0;
}

CUresult Charge(int device, size_t bytes) {
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  MemoryState& st = State();
  std::lock_guard<std::mutex> lock(st.mu);
  if (!Fits(st, device, bytes)) return CUDA_ERROR_OUT_OF_MEMORY;
  st.used[device] += bytes;
  return CUDA_SUCCESS;
}

void Uncharge(int device, size_t bytes) {
  MemoryState& st = State();
  std::lock_guard<std::mutex> lock(st.mu);
  st.used[device] -= bytes;
}

uint64_t UsedBytes(int device) {
  MemoryState& st = State();
  std::lock_guard<std::mutex> lock(st.mu);
  return st.used[device];
}

}  // namespace gs_cuda::fake
