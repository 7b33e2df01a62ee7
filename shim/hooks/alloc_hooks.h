// The hook bodies of the allocation entry points and of what a job is told about memory: the
// engines' allocations and frees (a driver allocation when no engine serves it, counted as
// memory that cannot move and waiting for room when the GPU is full), cuMemGetInfo and
// cuDeviceTotalMem as if the job were alone, cuMemGetAddressRange, and the driver's own
// allocations (streams, modules, graphs). Macros expanded by hooks.cc from hooks.def, after
// its GS_EXPORT and GS_REAL and its bookkeeping helpers (TrackAlloc, DriverAlloc,
// VirtualMemInfo, ...); included by hooks.cc only. Any thread.
#pragma once

// Records a driver allocation (memory that cannot move).
#define GS_TRACK_DRIVER_ALLOC(bytes)                                            \
  if (r == CUDA_SUCCESS && dptr != nullptr) {                                   \
    ::gshare::shim::TrackAlloc(::gshare::shim::g_allocations, *dptr,            \
                               ::gshare::shim::CurrentDeviceOrZero(), (bytes)); \
  }

#define GS_HOOK_ALLOC(name, params, args)                                            \
  GS_EXPORT CUresult name params noexcept {                                          \
    GS_REAL(name, params);                                                           \
    CUresult r;                                                                      \
    int gs_dev = ::gshare::shim::EngineDevice();                                     \
    if (gs_dev >= 0 && ::gshare::shim::Engine().Alloc(gs_dev, bytesize, dptr, &r)) { \
      return r;                                                                      \
    }                                                                                \
    r = ::gshare::shim::DriverAlloc(bytesize, [&] { return gs_real_fn args; });      \
    GS_TRACK_DRIVER_ALLOC(bytesize)                                                  \
    return r;                                                                        \
  }

#define GS_HOOK_ALLOCMANAGED(name, params, args) \
  GS_EXPORT CUresult name params noexcept {      \
    GS_REAL(name, params);                       \
    CUresult r = gs_real_fn args;                \
    GS_TRACK_DRIVER_ALLOC(bytesize)              \
    return r;                                    \
  }

#define GS_HOOK_ALLOCASYNC(name, params, args)                                              \
  GS_EXPORT CUresult name params noexcept {                                                 \
    GS_REAL(name, params);                                                                  \
    CUresult r;                                                                             \
    int gs_dev =                                                                            \
        ::gshare::shim::EngineDeviceForStream(hStream, ::gshare::shim::IsPerThread(#name)); \
    if (gs_dev >= 0 && ::gshare::shim::Engine().AllocAsync(gs_dev, bytesize, dptr, &r)) {   \
      return r;                                                                             \
    }                                                                                       \
    r = ::gshare::shim::DriverAlloc(bytesize, [&] { return gs_real_fn args; });             \
    GS_TRACK_DRIVER_ALLOC(bytesize)                                                         \
    return r;                                                                               \
  }
#define GS_HOOK_ALLOCPOOL GS_HOOK_ALLOCASYNC

#define GS_HOOK_ALLOCPITCH(name, params, args)                                             \
  GS_EXPORT CUresult name params noexcept {                                                \
    GS_REAL(name, params);                                                                 \
    int gs_dev = ::gshare::shim::EngineDevice();                                           \
    if (gs_dev >= 0) {                                                                     \
      return ::gshare::shim::EngineAllocPitch(gs_dev, dptr, pPitch, WidthInBytes, Height,  \
                                              ElementSizeBytes);                           \
    }                                                                                      \
    CUresult r = ::gshare::shim::DriverAlloc(static_cast<uint64_t>(WidthInBytes) * Height, \
                                             [&] { return gs_real_fn args; });             \
    GS_TRACK_DRIVER_ALLOC(pPitch != nullptr ? *pPitch * Height : 0)                        \
    return r;                                                                              \
  }

#define GS_HOOK_FREE(name, params, args)                              \
  GS_EXPORT CUresult name params noexcept {                           \
    GS_REAL(name, params);                                            \
    CUresult r;                                                       \
    if (::gshare::shim::Engine().Free(dptr, &r)) return r;            \
    r = gs_real_fn args;                                              \
    if (r == CUDA_SUCCESS) {                                          \
      ::gshare::shim::TrackFree(::gshare::shim::g_allocations, dptr); \
      ::gshare::shim::Engine().DriverFreed(dptr);                     \
    }                                                                 \
    return r;                                                         \
  }

#define GS_HOOK_FREEASYNC(name, params, args)                                              \
  GS_EXPORT CUresult name params noexcept {                                                \
    GS_REAL(name, params);                                                                 \
    CUresult r;                                                                            \
    if (::gshare::shim::Engine().FreeAsync(dptr, hStream, &r)) return r;                   \
    r = gs_real_fn args;                                                                   \
    if (r == CUDA_SUCCESS) ::gshare::shim::TrackFree(::gshare::shim::g_allocations, dptr); \
    return r;                                                                              \
  }

#define GS_HOOK_MEMINFO(name, params, args)                                        \
  GS_EXPORT CUresult name params noexcept {                                        \
    GS_REAL(name, params);                                                         \
    CUresult r = gs_real_fn args;                                                  \
    int gs_dev = ::gshare::shim::VirtualMemDevice();                               \
    if (r == CUDA_SUCCESS && gs_dev >= 0 && free != nullptr && total != nullptr) { \
      ::gshare::shim::VirtualMemInfo(gs_dev, free, total);                         \
    }                                                                              \
    return r;                                                                      \
  }

#define GS_HOOK_TOTALMEM(name, params, args)                                               \
  GS_EXPORT CUresult name params noexcept {                                                \
    GS_REAL(name, params);                                                                 \
    CUresult r = gs_real_fn args;                                                          \
    if (r == CUDA_SUCCESS && bytes != nullptr && ::gshare::shim::Engine().MovesOthers() && \
        dev >= 0 && dev < ::gshare::shim::kMaxDevices) {                                   \
      uint64_t gs_others = ::gshare::shim::OthersShown(dev);                               \
      *bytes = *bytes > gs_others ? *bytes - gs_others : 0;                                \
    }                                                                                      \
    return r;                                                                              \
  }

#define GS_HOOK_ADDRRANGE(name, params, args)                        \
  GS_EXPORT CUresult name params noexcept {                          \
    GS_REAL(name, params);                                           \
    if (::gshare::shim::Engine().AddressRange(dptr, pbase, psize)) { \
      return CUDA_SUCCESS;                                           \
    }                                                                \
    return gs_real_fn args;                                          \
  }

// Device memory the driver takes for itself: a stream, a module, a graph's instantiation
// (CUDA Programming Guide, "Memory footprint": the driver allocates these on the device). No
// engine serves it, so when other jobs' memory fills the GPU such a call would fail at once
// with out of memory (an LLM service's cuStreamCreate did, docs/benchmarks.md "2026-11-29 —
// Serving engines and multi-process jobs"); it waits for room as DriverAlloc does, asking for
// kDriverOwnBytes (the daemon adds its growth headroom, MemoryLedger::kGrowthHeadroom).
#define GS_HOOK_DRIVERALLOC(name, params, args)                          \
  GS_EXPORT CUresult name params noexcept {                              \
    GS_REAL(name, params);                                               \
    return ::gshare::shim::DriverAlloc(::gshare::shim::kDriverOwnBytes,  \
                                       [&] { return gs_real_fn args; }); \
  }
