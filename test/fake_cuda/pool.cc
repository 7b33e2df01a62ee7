// Stream-ordered allocation of the fake: memory pools (a default one per device, others from
// cuMemPoolCreate), cuMemAllocAsync/cuMemAllocFromPoolAsync and cuMemFreeAsync. An allocation
// happens at once (the host may use the pointer immediately); its free happens when the stream's
// worker reaches the cuMemFreeAsync. A freed block stays cached in its pool (still counted as
// device memory, reserved but unused) while the pool's reserved bytes exceed no more than
// CU_MEMPOOL_ATTR_RELEASE_THRESHOLD (default 0: released at once); cuMemPoolTrimTo releases
// cached blocks. Blocks are DeviceAlloc memory, so cuMemGetInfo counts what pools reserve.
// Any thread (one mutex).
#include "pool.h"

#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "driver.h"
#include "fake_cuda_api.h"
#include "memory.h"

namespace gs_cuda::fake {
namespace {

constexpr size_t kAlign = 256;

struct Pool {
  int device = 0;
  bool is_default = false;
  bool destroyed = false;
  uint64_t release_threshold = 0;
  int reuse[3] = {1, 1, 1};  // REUSE_FOLLOW_EVENT_DEPENDENCIES .. ALLOW_INTERNAL_DEPENDENCIES
  uint64_t used = 0, used_high = 0;
  uint64_t reserved = 0, reserved_high = 0;
  std::multimap<size_t, CUdeviceptr> cache;  // freed blocks by size
};

struct Block {
  Pool* pool;
  size_t bytes;
};

struct PoolState {
  std::mutex mu;                                  // guards everything below
  std::unordered_map<CUdeviceptr, Block> live;    // allocated from a pool
  std::unordered_map<CUdeviceptr, Block> cached;  // freed, kept by a pool
  Pool* default_pool[kMaxDevices] = {};
  Pool* current[kMaxDevices] = {};
};

PoolState& State() {
  static PoolState* s = new PoolState;  // leaked, see driver.h; so are pools
  return *s;
}

// REQUIRES: st.mu held. Takes cached blocks out of pool until its reserved bytes are <= keep;
// the caller frees the returned blocks with DeviceFree after dropping the lock.
std::vector<CUdeviceptr> TrimLocked(PoolState& st, Pool* pool, uint64_t keep) {
  std::vector<CUdeviceptr> out;
  while (pool->reserved > keep && !pool->cache.empty()) {
    auto it = std::prev(pool->cache.end());  // biggest first
    pool->reserved -= it->first;
    st.cached.erase(it->second);
    out.push_back(it->second);
    pool->cache.erase(it);
  }
  return out;
}

void FreeBlocks(const std::vector<CUdeviceptr>& blocks) {
  for (CUdeviceptr p : blocks) DeviceFree(p);
}

// REQUIRES: st.mu held.
Pool* DefaultPoolLocked(PoolState& st, int device) {
  if (st.default_pool[device] == nullptr) {
    Pool* p = new Pool;
    p->device = device;
    p->is_default = true;
    st.default_pool[device] = p;
    AddHandle(p, HandleKind::kPool);
  }
  if (st.current[device] == nullptr) st.current[device] = st.default_pool[device];
  return st.default_pool[device];
}

Pool* PoolOf(CUmemoryPool h) {
  return IsHandle(h, HandleKind::kPool) ? reinterpret_cast<Pool*>(h) : nullptr;
}

CUresult AllocFrom(Pool* pool, size_t bytes, CUdeviceptr* out) {
  if (bytes == 0 || out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  PoolState& st = State();
  {
    std::lock_guard<std::mutex> lock(st.mu);
    auto it = pool->cache.find(rounded);
    if (it != pool->cache.end()) {
      CUdeviceptr p = it->second;
      pool->cache.erase(it);
      st.cached.erase(p);
      st.live[p] = Block{pool, rounded};
      pool->used += rounded;
      if (pool->used > pool->used_high) pool->used_high = pool->used;
      *out = p;
      return CUDA_SUCCESS;
    }
  }
  CUdeviceptr p = 0;
  CUresult r = DeviceAlloc(pool->device, rounded, &p);
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {  // give the pool's cached blocks back and retry
    std::vector<CUdeviceptr> blocks;
    {
      std::lock_guard<std::mutex> lock(st.mu);
      blocks = TrimLocked(st, pool, 0);
    }
    FreeBlocks(blocks);
    r = DeviceAlloc(pool->device, rounded, &p);
  }
  if (r != CUDA_SUCCESS) return r;
  std::lock_guard<std::mutex> lock(st.mu);
  st.live[p] = Block{pool, rounded};
  pool->used += rounded;
  pool->reserved += rounded;
  if (pool->used > pool->used_high) pool->used_high = pool->used;
  if (pool->reserved > pool->reserved_high) pool->reserved_high = pool->reserved;
  *out = p;
  return CUDA_SUCCESS;
}

// Returns a live pool block to its pool. False when p is not one.
bool ReturnBlock(CUdeviceptr p) {
  PoolState& st = State();
  std::vector<CUdeviceptr> blocks;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    auto it = st.live.find(p);
    if (it == st.live.end()) return false;
    Block b = it->second;
    st.live.erase(it);
    b.pool->used -= b.bytes;
    b.pool->cache.emplace(b.bytes, p);
    st.cached[p] = b;
    blocks = TrimLocked(st, b.pool, b.pool->destroyed ? 0 : b.pool->release_threshold);
  }
  FreeBlocks(blocks);
  return true;
}

CUresult AllocAsync(CUdeviceptr* dptr, size_t bytes, Pool* pool, CUstream handle, bool per_thread) {
  Context* ctx;
  if (CUresult r = CheckContext(&ctx)) return r;
  Stream* s;
  if (CUresult r = ResolveStream(handle, per_thread, &s)) return r;
  if (pool == nullptr) {
    PoolState& st = State();
    std::lock_guard<std::mutex> lock(st.mu);
    DefaultPoolLocked(st, s->context()->device());
    pool = st.current[s->context()->device()];
  }
  return AllocFrom(pool, bytes, dptr);
}

CUresult AllocFromPool(CUdeviceptr* dptr, size_t bytes, CUmemoryPool h, CUstream handle,
                       bool per_thread) {
  if (CUresult r = CheckInit()) return r;
  Pool* pool = PoolOf(h);
  if (pool == nullptr || pool->destroyed) return CUDA_ERROR_INVALID_VALUE;
  return AllocAsync(dptr, bytes, pool, handle, per_thread);
}

CUresult FreeAsync(CUdeviceptr dptr, CUstream handle, bool per_thread) {
  Context* ctx;
  if (CUresult r = CheckContext(&ctx)) return r;
  Stream* s;
  if (CUresult r = ResolveStream(handle, per_thread, &s)) return r;
  bool pooled;
  {
    PoolState& st = State();
    std::lock_guard<std::mutex> lock(st.mu);
    if (st.cached.count(dptr) != 0) return CUDA_ERROR_INVALID_VALUE;
    pooled = st.live.count(dptr) != 0;
  }
  if (!pooled && !IsDeviceAlloc(dptr)) return CUDA_ERROR_INVALID_VALUE;
  Op op;
  op.body = [dptr, pooled] {  // a pooled block freed twice is ignored, never freed raw
    if (pooled) {
      ReturnBlock(dptr);
    } else {
      DeviceFree(dptr);
    }
  };
  uint64_t ticket;
  return s->Submit(std::move(op), Stream::Mode::kInternal, &ticket);
}

bool ValidLocation(const CUmemLocation& loc) {
  return loc.type == CU_MEM_LOCATION_TYPE_DEVICE && CheckDevice(loc.id) == CUDA_SUCCESS;
}

CUresult GetAttribute(Pool* pool, CUmemPool_attribute attr, void* value) {
  PoolState& st = State();
  std::lock_guard<std::mutex> lock(st.mu);
  auto u64 = static_cast<cuuint64_t*>(value);
  switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
      *static_cast<int*>(value) =
          pool->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES];
      return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: *u64 = pool->release_threshold; return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: *u64 = pool->reserved; return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: *u64 = pool->reserved_high; return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: *u64 = pool->used; return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH: *u64 = pool->used_high; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult SetAttribute(Pool* pool, CUmemPool_attribute attr, void* value) {
  PoolState& st = State();
  std::vector<CUdeviceptr> blocks;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    cuuint64_t v = attr >= CU_MEMPOOL_ATTR_RELEASE_THRESHOLD ? *static_cast<cuuint64_t*>(value) : 0;
    switch (attr) {
      case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
      case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
      case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        pool->reuse[attr - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES] =
            *static_cast<int*>(value) != 0;
        return CUDA_SUCCESS;
      case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
        pool->release_threshold = v;
        blocks = TrimLocked(st, pool, v);
        break;
      case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:  // only a reset to 0 is allowed
        if (v != 0) return CUDA_ERROR_INVALID_VALUE;
        pool->reserved_high = pool->reserved;
        return CUDA_SUCCESS;
      case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        if (v != 0) return CUDA_ERROR_INVALID_VALUE;
        pool->used_high = pool->used;
        return CUDA_SUCCESS;
      default: return CUDA_ERROR_INVALID_VALUE;  // the *_CURRENT ones are read-only
    }
  }
  FreeBlocks(blocks);
  return CUDA_SUCCESS;
}

}  // namespace

CUresult PoolFreeNow(CUdeviceptr p) {
  {
    PoolState& st = State();
    std::lock_guard<std::mutex> lock(st.mu);
    if (st.cached.count(p) != 0) return CUDA_ERROR_INVALID_VALUE;
  }
  return ReturnBlock(p) ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

}  // namespace gs_cuda::fake

namespace gs_cuda {
extern "C" {

CUresult cuMemAllocAsync(CUdeviceptr_v2* dptr, size_t bytesize, CUstream hStream) noexcept {
  return fake::AllocAsync(dptr, bytesize, nullptr, hStream, false);
}
CUresult cuMemAllocAsync_ptsz(CUdeviceptr_v2* dptr, size_t bytesize, CUstream hStream) noexcept {
  return fake::AllocAsync(dptr, bytesize, nullptr, hStream, true);
}
CUresult cuMemAllocFromPoolAsync(CUdeviceptr_v2* dptr, size_t bytesize, CUmemoryPool pool,
                                 CUstream hStream) noexcept {
  return fake::AllocFromPool(dptr, bytesize, pool, hStream, false);
}
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr_v2* dptr, size_t bytesize, CUmemoryPool pool,
                                      CUstream hStream) noexcept {
  return fake::AllocFromPool(dptr, bytesize, pool, hStream, true);
}
CUresult cuMemFreeAsync(CUdeviceptr_v2 dptr, CUstream hStream) noexcept {
  return fake::FreeAsync(dptr, hStream, false);
}
CUresult cuMemFreeAsync_ptsz(CUdeviceptr_v2 dptr, CUstream hStream) noexcept {
  return fake::FreeAsync(dptr, hStream, true);
}

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool* pool_out, CUdevice dev) noexcept {
  if (CUresult r = fake::CheckDevice(dev)) return r;
  if (pool_out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  fake::PoolState& st = fake::State();
  std::lock_guard<std::mutex> lock(st.mu);
  *pool_out = reinterpret_cast<CUmemoryPool>(fake::DefaultPoolLocked(st, dev));
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice dev) noexcept {
  if (CUresult r = fake::CheckDevice(dev)) return r;
  if (pool == nullptr) return CUDA_ERROR_INVALID_VALUE;
  fake::PoolState& st = fake::State();
  std::lock_guard<std::mutex> lock(st.mu);
  fake::DefaultPoolLocked(st, dev);
  *pool = reinterpret_cast<CUmemoryPool>(st.current[dev]);
  return CUDA_SUCCESS;
}

CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool) noexcept {
  if (CUresult r = fake::CheckDevice(dev)) return r;
  fake::Pool* p = fake::PoolOf(pool);
  if (p == nullptr || p->destroyed || p->device != dev) return CUDA_ERROR_INVALID_VALUE;
  fake::PoolState& st = fake::State();
  std::lock_guard<std::mutex> lock(st.mu);
  fake::DefaultPoolLocked(st, dev);
  st.current[dev] = p;
  return CUDA_SUCCESS;
}

CUresult cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* poolProps) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  if (pool == nullptr || poolProps == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (poolProps->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
      !fake::ValidLocation(poolProps->location)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  fake::Pool* p = new fake::Pool;
  p->device = poolProps->location.id;
  fake::AddHandle(p, fake::HandleKind::kPool);
  *pool = reinterpret_cast<CUmemoryPool>(p);
  return CUDA_SUCCESS;
}

// Outstanding allocations stay valid; they are released when freed (the pool is leaked).
CUresult cuMemPoolDestroy(CUmemoryPool pool) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  fake::Pool* p = fake::PoolOf(pool);
  if (p == nullptr || p->is_default) return CUDA_ERROR_INVALID_VALUE;
  fake::DropHandle(p);
  fake::PoolState& st = fake::State();
  std::vector<CUdeviceptr> blocks;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    p->destroyed = true;
    if (st.current[p->device] == p) st.current[p->device] = st.default_pool[p->device];
    blocks = fake::TrimLocked(st, p, 0);
  }
  fake::FreeBlocks(blocks);
  return CUDA_SUCCESS;
}

CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  fake::Pool* p = fake::PoolOf(pool);
  if (p == nullptr) return CUDA_ERROR_INVALID_VALUE;
  fake::PoolState& st = fake::State();
  std::vector<CUdeviceptr> blocks;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    blocks = fake::TrimLocked(st, p, minBytesToKeep);
  }
  fake::FreeBlocks(blocks);
  return CUDA_SUCCESS;
}

CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  fake::Pool* p = fake::PoolOf(pool);
  if (p == nullptr || value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return fake::SetAttribute(p, attr, value);
}

CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  fake::Pool* p = fake::PoolOf(pool);
  if (p == nullptr || value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  return fake::GetAttribute(p, attr, value);
}

}  // extern "C"
}  // namespace gs_cuda
