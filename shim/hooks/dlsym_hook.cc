// The dlsym route: cuBLAS, cuDNN, XLA, CuPy and static cudart look driver entry points up
// with dlsym(handle, "cuXxx"), pynvml NVML's with dlsym(handle, "nvmlXxx") (nvml_view.h). The shim
// exports dlsym under glibc's symbol versions so both old (GLIBC_2.2.5 / GLIBC_2.17) and new
// (GLIBC_2.34) references bind here, answers hooked names with its wrappers, and passes everything
// else to glibc. Safe in unsafe contexts: no heap, no logger; any thread.
#include <dlfcn.h>

#include <atomic>

#include "hooks/nvml_view.h"
#include "driver/real_driver.h"

namespace gshare::shim {
namespace {

using DlsymFn = void* (*)(void*, const char*);
std::atomic<DlsymFn> g_real_dlsym{nullptr};

DlsymFn FindRealDlsym() {
  DlsymFn fn = g_real_dlsym.load(std::memory_order_acquire);
  if (fn != nullptr) return fn;
  // dlvsym is not hooked. Newest version first; the base version of each architecture
  // (x86-64 GLIBC_2.2.5, aarch64 GLIBC_2.17) for glibc < 2.34.
  static const char* const kVersions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"};
  for (const char* v : kVersions) {
    fn = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", v));
    if (fn != nullptr) break;
  }
  g_real_dlsym.store(fn, std::memory_order_release);
  return fn;
}

}  // namespace

void* RealDlsym(void* handle, const char* name) {
  DlsymFn fn = FindRealDlsym();
  return fn != nullptr ? fn(handle, name) : nullptr;
}

}  // namespace gshare::shim

// Both exported versions share one implementation. A hooked name is answered with the
// wrapper only when the real lookup finds the symbol in `handle`, so "not found" stays
// "not found". Limitation: RTLD_NEXT is resolved relative to the shim, not the caller.
extern "C" __attribute__((visibility("default"))) void* gshare_dlsym_hook(void* handle,
                                                                          const char* name) {
  void* real = gshare::shim::RealDlsym(handle, name);
  if (real == nullptr) return nullptr;
  if (name[0] == 'n') {
    void* nvml = gshare::shim::NvmlWrapperFor(handle, name, real);
    return nvml != nullptr ? nvml : real;
  }
  int id = gshare::shim::HookOfName(name);
  return id < 0 ? real : gshare::shim::HookWrapper(id);
}

extern "C" __attribute__((visibility("default"), alias("gshare_dlsym_hook"))) void*
gshare_dlsym_compat(void* handle, const char* name);

#if defined(__x86_64__)
__asm__(".symver gshare_dlsym_compat, dlsym@GLIBC_2.2.5");
#elif defined(__aarch64__)
__asm__(".symver gshare_dlsym_compat, dlsym@GLIBC_2.17");
#else
#error "gshare's shim supports x86-64 and aarch64"
#endif
__asm__(".symver gshare_dlsym_hook, dlsym@@GLIBC_2.34");
