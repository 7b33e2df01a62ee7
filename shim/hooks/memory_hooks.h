// The hook bodies of the memory engines' driver entry points that are not allocations: the
// application's own VMM calls (served by the swap engine for its virtual handles, the driver's
// otherwise) and legacy IPC export. Macros expanded by hooks.cc from hooks.def, after its
// GS_EXPORT and GS_REAL and its bookkeeping helpers; included by hooks.cc only. Any thread.
#pragma once

// Application VMM: under the swap engine device handles are the engine's virtual ids
// (swap_app_vmm.cc); everything else goes to the driver and counts as fixed memory.
#define GS_SWAP ::gshare::shim::SwapSpace::Get()
#define GS_IS_APP_HANDLE(h) ::gshare::shim::SwapSpace::IsAppHandle(h)

#define GS_HOOK_MEMCREATE(name, params, args)                                                      \
  GS_EXPORT CUresult name params noexcept {                                                        \
    GS_REAL(name, params);                                                                         \
    CUresult r;                                                                                    \
    if (GS_SWAP.AppCreate(handle, size, prop, flags, &r)) return r;                                \
    r = ::gshare::shim::DriverAlloc(size, [&] { return gs_real_fn args; });                        \
    if (r == CUDA_SUCCESS && handle != nullptr && prop != nullptr &&                               \
        prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE) {                                      \
      ::gshare::shim::TrackAlloc(::gshare::shim::g_vmm_handles, *handle, prop->location.id, size); \
    }                                                                                              \
    return r;                                                                                      \
  }

#define GS_HOOK_MEMRELEASE(name, params, args)                                               \
  GS_EXPORT CUresult name params noexcept {                                                  \
    GS_REAL(name, params);                                                                   \
    CUresult r;                                                                              \
    if (GS_IS_APP_HANDLE(handle) && GS_SWAP.AppRelease(handle, &r)) return r;                \
    r = gs_real_fn args;                                                                     \
    if (r == CUDA_SUCCESS) ::gshare::shim::TrackFree(::gshare::shim::g_vmm_handles, handle); \
    return r;                                                                                \
  }

// A call the swap engine answers when `served` (which sets r) is true; the driver otherwise.
#define GS_SERVED_OR_REAL(name, params, args, served) \
  GS_EXPORT CUresult name params noexcept {           \
    GS_REAL(name, params);                            \
    CUresult r;                                       \
    if (served) return r;                             \
    return gs_real_fn args;                           \
  }
#define GS_HOOK_MEMMAP(name, params, args) \
  GS_SERVED_OR_REAL(                       \
      name, params, args,                  \
      GS_IS_APP_HANDLE(handle) && GS_SWAP.AppMap(ptr, size, offset, handle, flags, &r))
#define GS_HOOK_MEMUNMAP(name, params, args) \
  GS_SERVED_OR_REAL(name, params, args, GS_SWAP.AppUnmap(ptr, size, &r))
#define GS_HOOK_MEMSETACCESS(name, params, args) \
  GS_SERVED_OR_REAL(name, params, args, GS_SWAP.AppSetAccess(ptr, size, desc, count, &r))
#define GS_HOOK_MEMGETACCESS(name, params, args) \
  GS_SERVED_OR_REAL(name, params, args, GS_SWAP.AppGetAccess(flags, location, ptr, &r))
#define GS_HOOK_MEMRETAIN(name, params, args) \
  GS_SERVED_OR_REAL(name, params, args, GS_SWAP.AppRetain(handle, addr, &r))
#define GS_HOOK_MEMPROPS(name, params, args) \
  GS_SERVED_OR_REAL(name, params, args,      \
                    GS_IS_APP_HANDLE(handle) && GS_SWAP.AppProperties(prop, handle, &r))

// An exported handle stays resident for good: the driver exports the real one.
#define GS_HOOK_MEMEXPORT(name, params, args)                                                      \
  GS_EXPORT CUresult name params noexcept {                                                        \
    GS_REAL(name, params);                                                                         \
    CUmemGenericAllocationHandle gs_handle = handle;                                               \
    CUresult r;                                                                                    \
    if (GS_IS_APP_HANDLE(handle) && GS_SWAP.AppPin(handle, &gs_handle, &r) && r != CUDA_SUCCESS) { \
      return r;                                                                                    \
    }                                                                                              \
    return gs_real_fn(shareableHandle, gs_handle, handleType, flags);                              \
  }

// Legacy CUDA IPC. The swap engine's memory is VMM memory, which has no legacy IPC handle
// (CUDA Programming Guide, "Virtual Memory Management"): cuIpcGetMemHandle of it gets a
// handle of gshare's, which cuIpcOpenMemHandle in the importing process's shim maps
// (ipc_wire.h). The managed engine's memory cannot be shared so: refused with
// CUDA_ERROR_NOT_SUPPORTED and one line on stderr per process. The driver's handles and
// memory the engines do not serve go to the driver.
#define GS_HOOK_IPCEXPORT(name, params, args)                                \
  GS_EXPORT CUresult name params noexcept {                                  \
    GS_REAL(name, params);                                                   \
    CUresult r;                                                              \
    if (GS_SWAP.IpcPin(dptr, pHandle, &r)) {                                 \
      if (r == CUDA_ERROR_NOT_SUPPORTED) ::gshare::shim::WarnIpcOnce(false); \
      return r;                                                              \
    }                                                                        \
    if (::gshare::shim::Engine().OwnsManaged(dptr)) {                        \
      ::gshare::shim::WarnIpcOnce(true);                                     \
      return CUDA_ERROR_NOT_SUPPORTED;                                       \
    }                                                                        \
    return gs_real_fn args;                                                  \
  }
#define GS_HOOK_IPCOPEN(name, params, args)                                  \
  GS_EXPORT CUresult name params noexcept {                                  \
    CUresult r;                                                              \
    if (::gshare::shim::IpcImports::Get().Open(handle, pdptr, &r)) return r; \
    GS_REAL(name, params);                                                   \
    return gs_real_fn args;                                                  \
  }
#define GS_HOOK_IPCCLOSE(name, params, args)                         \
  GS_EXPORT CUresult name params noexcept {                          \
    CUresult r;                                                      \
    if (::gshare::shim::IpcImports::Get().Close(dptr, &r)) return r; \
    GS_REAL(name, params);                                           \
    return gs_real_fn args;                                          \
  }
