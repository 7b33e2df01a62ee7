// The swap engine's records (SwapSpace, swap_space.h): a region of the address space it backs,
// with the chunks that back it, and the application's own handles and where it mapped them.
// Plain structs, calloc'd and freed by the engine; its mu_ guards every one. Sizes and offsets
// in bytes.
#pragma once

#include <cstdint>

#include "driver/cuda_abi.h"

namespace gshare::shim::swap_internal {

inline constexpr uint64_t kGranule = 2ull << 20;  // VMM granularity of NVIDIA GPUs
inline constexpr int kSlabMinShift = 9;           // 512 B blocks (cudaMalloc aligns to 256 B)

// A chunk's state.
enum : uint8_t { kFresh = 0, kResident = 1, kEvicted = 2 };

struct Region;
struct AppMapping;

struct Chunk {
  uint64_t offset;  // within its region
  uint64_t bytes;
  gs_cuda::CUmemGenericAllocationHandle handle;  // non-zero while mapped
  void* host;     // a pool extent: the data while evicted, or its staged copy while resident
  uint8_t state;  // kFresh, kResident, kEvicted
  // Resident with a current copy in host memory (SwapSpace::Stage).
  bool staged() const { return state == kResident && host != nullptr; }
};

// An application's cuMemCreate handle, served by the engine (swap_app_vmm.cc). Its region
// has one chunk; the region's base is the engine's own mapping of it.
struct AppHandle {
  gs_cuda::CUmemAllocationProp prop;         // re-created with these properties
  gs_cuda::CUmemGenericAllocationHandle id;  // what the application holds
  int refs;          // cuMemCreate + cuMemRetainAllocationHandle - cuMemRelease
  AppMapping* maps;  // the application's mappings of it
};

// Where the application mapped a handle (cuMemMap).
struct AppMapping {
  gs_cuda::CUdeviceptr base;  // the address it mapped at
  uint64_t size;
  uint64_t offset;  // into the handle
  Region* owner;
  AppMapping* next;  // the next mapping of the same handle
  int naccess;       // the access the application set, applied again at each swap-in
  gs_cuda::CUmemAccessDesc* access;
};

struct Region {
  gs_cuda::CUdeviceptr base;
  uint64_t size;  // reserved bytes, a multiple of kGranule
  int device;
  int nchunks;
  Chunk* chunks;
  int block_shift;  // slabs: log2 of the block size; 0 otherwise
  int used_blocks;
  AppHandle* app;  // an application's handle, else nullptr
  // Shared with other processes (an exported application handle, or legacy IPC of an
  // allocation): resident for good and counted as fixed memory, never evicted or staged.
  bool exported;
  uint64_t bitmap[(kGranule >> kSlabMinShift) / 64];
};

}  // namespace gshare::shim::swap_internal
