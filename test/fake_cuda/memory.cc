#include "memory.h"

#include <cstdlib>
#include <map>
#include <mutex>

#include "device_usage.h"
#include "driver.h"

namespace gs_cuda::fake {
namespace {

constexpr size_t kAlign = 256;  // what cudaMalloc promises

struct Block {
  size_t requested;
  size_t bytes;  // charged: requested rounded up to kAlign
  int device;
};

struct MemoryState {
  std::mutex mu;                        // guards everything below
  std::map<CUdeviceptr, Block> allocs;  // ordered: cuMemGetAddressRange looks up interiors
};

MemoryState& State() {
  static MemoryState* s = new MemoryState;  // leaked, see driver.h
  return *s;
}

}  // namespace

CUresult DeviceAlloc(int device, size_t bytes, CUdeviceptr* out) {
  if (bytes == 0 || out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (bytes > GetSettings().mem_bytes) return CUDA_ERROR_OUT_OF_MEMORY;
  size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  if (CUresult r = Charge(device, rounded)) return r;  // before the malloc, outside the lock
  void* p = std::aligned_alloc(kAlign, rounded);
  if (p == nullptr) {
    Uncharge(device, rounded);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  CUdeviceptr d = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p));
  MemoryState& st = State();
  std::lock_guard<std::mutex> lock(st.mu);
  st.allocs[d] = Block{bytes, rounded, device};
  *out = d;
  return CUDA_SUCCESS;
}

CUresult DeviceFree(CUdeviceptr p) {
  MemoryState& st = State();
  Block b;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    auto it = st.allocs.find(p);
    if (it == st.allocs.end()) return CUDA_ERROR_INVALID_VALUE;
    b = it->second;
    st.allocs.erase(it);
  }
  std::free(reinterpret_cast<void*>(static_cast<uintptr_t>(p)));
  Uncharge(b.device, b.bytes);
  return CUDA_SUCCESS;
}

bool IsDeviceAlloc(CUdeviceptr p) {
  MemoryState& st = State();
  std::lock_guard<std::mutex> lock(st.mu);
  return st.allocs.count(p) != 0;
}

bool DeviceAllocRange(CUdeviceptr p, CUdeviceptr* base, size_t* size) {
  MemoryState& st = State();
  std::lock_guard<std::mutex> lock(st.mu);
  auto it = st.allocs.upper_bound(p);
  if (it == st.allocs.begin()) return false;
  --it;
  if (p >= it->first + it->second.requested) return false;
  *base = it->first;
  *size = it->second.requested;
  return true;
}

// The counters are the machine's, hence by physical index. A restore that moves an ordinal to
// another GPU moves its charged bytes with it (checkpoint.cc), so an allocation charged before
// is given back to the device its ordinal names at the time of the free.
CUresult Charge(int device, size_t bytes) {
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  return ChargeDevice(PhysicalDevice(device), bytes, GetSettings().mem_bytes);
}

void Uncharge(int device, size_t bytes) { UnchargeDevice(PhysicalDevice(device), bytes); }

uint64_t UsedBytes(int device) { return DeviceUsedBytes(PhysicalDevice(device)); }

}  // namespace gs_cuda::fake
