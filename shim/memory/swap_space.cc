// The swap engine. Lock order: the lease client's mutex, then mu_ (the engine never calls
// into the lease client while holding mu_; on_demand only sets an atomic there).
#include "memory/swap_space.h"

#include "memory/swap_space_internal.h"

#include <time.h>

#include <cstdlib>

#include "memory/memory_host.h"
#include "memory/mono_clock.h"
#include "memory/ipc_export.h"
#include "memory/memory_engine.h"
#include "driver/real_driver.h"
#include "shim_log.h"
#include "memory/vmm_driver.h"

namespace gshare::shim {
using namespace swap_internal;

namespace {
int SlabShift(uint64_t bytes) {
  int s = kSlabMinShift;
  while ((1ull << s) < bytes) ++s;
  return s;
}
uint64_t RoundUp(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }
}  // namespace

SwapSpace g_swap_space;
SwapSpace& SwapSpace::Get() { return g_swap_space; }

bool SwapSpace::On() { return Engine().kind() == proto::MemoryEngine::kSwap; }

void SwapSpace::SetHostPoolLimit(uint64_t bytes) { pool_.SetLimit(bytes); }

CUresult SwapSpace::BackChunk(Region& r, Chunk& c) {
  const VmmDriver& v = *Vmm();
  CUmemAllocationProp prop = r.app != nullptr ? r.app->prop : ChunkProp(r.device);
  CUmemGenericAllocationHandle h = 0;
  CUresult res = v.cuMemCreate(&h, c.bytes, &prop, 0);
  if (r.app == nullptr && shareable_chunks_ == 0) {
    // The first chunk asks whether the driver gives the type (a container without the
    // capability, or a driver without it, refuses): without it chunks are plain.
    shareable_chunks_ = res == CUDA_SUCCESS || res == CUDA_ERROR_OUT_OF_MEMORY ? 1 : 2;
    if (shareable_chunks_ == 2) {
      prop = ChunkProp(r.device);
      res = v.cuMemCreate(&h, c.bytes, &prop, 0);
    }
  }
  if (res != CUDA_SUCCESS) return res;
  CUdeviceptr at = r.base + c.offset;
  res = v.cuMemMap(at, c.bytes, 0, h, 0);
  if (res != CUDA_SUCCESS) {
    v.cuMemRelease(h);
    return res;
  }
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  res = v.cuMemSetAccess(at, c.bytes, &access, 1);
  if (res != CUDA_SUCCESS) {
    v.cuMemUnmap(at, c.bytes);
    v.cuMemRelease(h);
    return res;
  }
  if (r.app != nullptr) maps_.MapAll(*r.app, h);
  c.handle = h;
  return CUDA_SUCCESS;
}

CUmemAllocationProp SwapSpace::ChunkProp(int device) const {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  if (shareable_chunks_ != 2) prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}

void SwapSpace::UnbackLocked(Region& r, Chunk& c) {
  const VmmDriver& v = *Vmm();
  if (r.app != nullptr) maps_.UnmapAll(*r.app);
  v.cuMemUnmap(r.base + c.offset, c.bytes);
  v.cuMemRelease(c.handle);
  c.handle = 0;
}

CUresult SwapSpace::NewRegionLocked(int device, uint64_t bytes, AppHandle* app, Region** out) {
  const VmmDriver& v = *Vmm();
  uint64_t size = RoundUp(bytes, kGranule);
  int n = app != nullptr ? 1 : static_cast<int>((size + kChunkBytes - 1) / kChunkBytes);
  auto* r = static_cast<Region*>(std::calloc(1, sizeof(Region)));
  auto* chunks = static_cast<Chunk*>(std::calloc(n, sizeof(Chunk)));
  if (r == nullptr || chunks == nullptr) {
    std::free(r);
    std::free(chunks);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  CUresult res = v.cuMemAddressReserve(&r->base, size, kGranule, 0, 0);
  if (res != CUDA_SUCCESS) {
    std::free(r);
    std::free(chunks);
    return res;
  }
  r->size = size;
  r->device = device;
  r->nchunks = n;
  r->chunks = chunks;
  r->app = app;
  for (int i = 0; i < n; ++i) {
    chunks[i].offset = static_cast<uint64_t>(i) * kChunkBytes;
    chunks[i].bytes = (i == n - 1) ? size - chunks[i].offset : kChunkBytes;
    chunks[i].state = kFresh;
  }
  // Running: back it now, waiting (outside the lock) for room another job gives up. A holder
  // busy allocating (or waiting for room) is not idle: it keeps the lease (idle_release).
  bool demanded = false;
  RoomWait wait(kAllocWaitNs, MonoNowNs());
  for (int i = 0; i < n && Running(device); ++i) {
    Chunk& c = chunks[i];
    for (;;) {
      Host().MarkActive(device);
      res = BackChunk(*r, c);
      if (res == CUDA_SUCCESS) {
        c.state = kResident;
        break;
      }
      if (res != CUDA_ERROR_OUT_OF_MEMORY || !wait.KeepWaiting(MonoNowNs(), FreeDeviceBytes)) break;
      if (!demanded) {
        // The whole region: its chunks backed so far are on the GPU but in no report (the
        // region is counted once inserted), so the daemon must see all of it as wanted, or it
        // may think the jobs fit and keep a shared GPU on which this allocation never fits,
        // leaving it to wait for the other job to end (docs/memory.md, "How `swap` works").
        Host().SetDemand(device, size);
        demanded = true;
      }
      mu_.Unlock();
      SleepNs(wait.PauseNs(MonoNowNs(), 2'000'000));
      mu_.Lock();
      if (!Running(device)) {  // the lease moved on: the rest is backed at the next swap-in
        res = CUDA_SUCCESS;
        break;
      }
    }
    if (res != CUDA_SUCCESS) break;
  }
  if (demanded) Host().SetDemand(device, 0);
  if (res == CUDA_SUCCESS && !regions_.Insert(r)) res = CUDA_ERROR_OUT_OF_MEMORY;
  if (res != CUDA_SUCCESS) {
    for (int i = 0; i < n; ++i) {
      if (chunks[i].handle != 0) UnbackLocked(*r, chunks[i]);
    }
    v.cuMemAddressFree(r->base, size);
    std::free(chunks);
    std::free(r);
    return res;
  }
  allocated_[device] += size;
  *out = r;
  return CUDA_SUCCESS;
}

bool swap_internal::CanEverFit(int device, uint64_t bytes, uint64_t allocated) {
  uint64_t total = DeviceTotalBytes(device);
  if (total == 0) return true;
  uint64_t others = Host().OthersFixed(device) + ContextReserve(total);
  uint64_t room = total > others ? total - others : 0;
  int64_t fixed = Host().FixedBytes(device);
  uint64_t own = allocated + (fixed > 0 ? static_cast<uint64_t>(fixed) : 0);
  if (own + RoundUp(bytes, kGranule) <= room) return true;
  Warn(
      "an allocation of %llu bytes cannot fit: this job would hold %llu of the %llu bytes the "
      "GPU can give it",
      static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(own + bytes),
      static_cast<unsigned long long>(room));
  return false;
}

void SwapSpace::FreeRegionLocked(Region* r) {
  for (int i = 0; i < r->nchunks; ++i) {
    Chunk& c = r->chunks[i];
    if (c.handle != 0) UnbackLocked(*r, c);
    if (c.host != nullptr) pool_.Give(c.host, c.bytes);
  }
  Vmm()->cuMemAddressFree(r->base, r->size);
  if (r->exported && r->app == nullptr) IpcExports::Get().Forget(r->base);
  if (r->exported) {
    Host().AddFixedBytes(r->device, -static_cast<int64_t>(r->size));
  } else {
    allocated_[r->device] -= r->size;
  }
  regions_.Remove(r);
  if (r->app != nullptr) {
    app_ids_.Unbind(r->app->id & ~kAppHandleTag);
    std::free(r->app);
  }
  std::free(r->chunks);
  std::free(r);
}

CUresult SwapSpace::SlabAllocLocked(int device, uint64_t bytes, CUdeviceptr* out) {
  int shift = SlabShift(bytes);
  int blocks = static_cast<int>(kGranule >> shift);
  Region* slab = regions_.SlabWithRoom(device, shift);
  if (slab == nullptr) {
    CUresult res = NewRegionLocked(device, kGranule, nullptr, &slab);
    if (res != CUDA_SUCCESS) return res;
    slab->block_shift = shift;
  }
  for (int b = 0; b < blocks; ++b) {
    uint64_t& word = slab->bitmap[b / 64];
    if ((word >> (b % 64)) & 1) continue;
    word |= 1ull << (b % 64);
    ++slab->used_blocks;
    *out = slab->base + (static_cast<uint64_t>(b) << shift);
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_UNKNOWN;  // unreachable: used_blocks < blocks
}

void SwapSpace::FreeBlockLocked(Region* r, CUdeviceptr p) {
  uint64_t b = (p - r->base) >> r->block_shift;
  r->bitmap[b / 64] &= ~(1ull << (b % 64));
  if (--r->used_blocks == 0) FreeRegionLocked(r);
}

CUresult SwapSpace::Alloc(int device, uint64_t bytes, CUdeviceptr* out) {
  if (bytes == 0 || out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (device < 0 || device >= kMaxDevices) return CUDA_ERROR_INVALID_CONTEXT;
  mu_.Lock();
  devices_.AdoptCurrent(device);
  ReapDeferredLocked(false);
  CUresult res;
  if (!CanEverFit(device, bytes, allocated_[device])) {
    res = CUDA_ERROR_OUT_OF_MEMORY;
  } else if (bytes <= kSlabMax) {
    res = SlabAllocLocked(device, bytes, out);
  } else {
    Region* r = nullptr;
    res = NewRegionLocked(device, bytes, nullptr, &r);
    if (res == CUDA_SUCCESS) *out = r->base;
  }
  mu_.Unlock();
  if (res == CUDA_SUCCESS) Host().MemoryChanged(device);
  return res;
}

bool SwapSpace::Free(CUdeviceptr p, CUresult* result) {
  mu_.Lock();
  bool ours = regions_.Find(p) != nullptr;
  mu_.Unlock();
  if (!ours) return false;
  // cuMemFree waits for the device; so does this, before the memory can be reused.
  Extras().cuCtxSynchronize();
  mu_.Lock();
  Region* r = regions_.Find(p);
  *result = CUDA_SUCCESS;
  if (r == nullptr) {
    *result = CUDA_ERROR_INVALID_VALUE;  // freed twice meanwhile
  } else if (r->block_shift != 0) {
    FreeBlockLocked(r, p);
  } else if (p != r->base) {
    *result = CUDA_ERROR_INVALID_VALUE;
  } else {
    FreeRegionLocked(r);
  }
  mu_.Unlock();
  Host().MemoryChanged(-1);
  return true;
}

bool SwapSpace::FreeAsync(CUdeviceptr p, CUstream stream, CUresult* result) {
  mu_.Lock();
  if (regions_.Find(p) == nullptr) {
    mu_.Unlock();
    return false;
  }
  *result = deferred_.Add(p, stream);
  mu_.Unlock();
  return true;
}

void SwapSpace::ReapDeferredLocked(bool wait) {
  // Runs inside this hold of mu_, called through DeferredFrees::Reap, which the analysis
  // cannot see.
  deferred_.Reap(wait, [this](CUdeviceptr p) NO_THREAD_SAFETY_ANALYSIS {
    Region* r = regions_.Find(p);
    if (r != nullptr && r->block_shift != 0) {
      FreeBlockLocked(r, p);
    } else if (r != nullptr && r->base == p) {
      FreeRegionLocked(r);
    }
  });
}

bool SwapSpace::AddressRange(CUdeviceptr p, CUdeviceptr* base, size_t* size) {
  mu_.Lock();
  Region* r = regions_.Find(p);
  if (r != nullptr) {
    uint64_t b = r->base, s = r->size;
    if (r->block_shift != 0) {
      s = 1ull << r->block_shift;
      b = r->base + ((p - r->base) & ~(s - 1));
    }
    if (base != nullptr) *base = b;
    if (size != nullptr) *size = s;
  }
  mu_.Unlock();
  return r != nullptr;
}

void SwapSpace::SetRunning(int device, bool running) {
  running_[device].store(running, std::memory_order_release);
}

CUcontext SwapSpace::ContextUnlocked(int device) const { return devices_.Context(device); }

SwapSpace::BatchPipe SwapSpace::PipeOf(int device) {
  BatchPipe pipe;
  pipe.stream = devices_.Stream(device);
  devices_.BatchEvents(device, pipe.done);
  return pipe;
}
}  // namespace gshare::shim
