// Loads the real driver and builds the reverse pointer map used by cuGetProcAddress.
#include "driver/real_driver.h"

#include <dlfcn.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "driver/census.h"
#include "driver/hook_decls.h"
#include "shim_log.h"

namespace gshare::shim {
namespace {

struct Names {
  const char* name;
  void* wrapper;
  bool gated;
};

#define GS_HOOK(kind, name, pfn, params, args) \
  {#name, reinterpret_cast<void*>(&gs_cuda::name), std::string_view(#kind) == "GATE"},
const Names kHooks[] = {
#include "driver/hooks.def"
};
#undef GS_HOOK
static_assert(sizeof(kHooks) / sizeof(kHooks[0]) == kNumHooks);

struct PointerEntry {
  const void* fn;
  int hook;
};

// Written once under g_once, read-only afterwards.
std::atomic<void*> g_real[kNumHooks];
DriverExtras g_extras;
PointerEntry g_by_pointer[kNumHooks];
int g_by_pointer_count = 0;
std::atomic<bool> g_loaded{false};
pthread_once_t g_once = PTHREAD_ONCE_INIT;

void LoadOnce() {
  CensusInit();
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (lib == nullptr) return;
  for (int i = 0; i < kNumHooks; ++i) {
    void* fn = RealDlsym(lib, kHooks[i].name);
    g_real[i].store(fn, std::memory_order_relaxed);
    if (fn != nullptr) g_by_pointer[g_by_pointer_count++] = {fn, i};
  }
  std::sort(g_by_pointer, g_by_pointer + g_by_pointer_count,
            [](const PointerEntry& a, const PointerEntry& b) { return a.fn < b.fn; });
  auto get = [lib](auto& slot, const char* name) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(RealDlsym(lib, name));
  };
  get(g_extras.cuCtxGetCurrent, "cuCtxGetCurrent");
  get(g_extras.cuCtxGetDevice, "cuCtxGetDevice");
  get(g_extras.cuCtxPushCurrent_v2, "cuCtxPushCurrent_v2");
  get(g_extras.cuCtxPopCurrent_v2, "cuCtxPopCurrent_v2");
  get(g_extras.cuCtxSynchronize, "cuCtxSynchronize");
  get(g_extras.cuStreamIsCapturing, "cuStreamIsCapturing");
  get(g_extras.cuDeviceGetUuid, "cuDeviceGetUuid");
  get(g_extras.cuEventCreate, "cuEventCreate");
  get(g_extras.cuEventRecord, "cuEventRecord");
  get(g_extras.cuEventSynchronize, "cuEventSynchronize");
  get(g_extras.cuEventQuery, "cuEventQuery");
  get(g_extras.cuEventElapsedTime, "cuEventElapsedTime_v2");
  if (g_extras.cuEventElapsedTime == nullptr) {
    get(g_extras.cuEventElapsedTime, "cuEventElapsedTime");
  }
  get(g_extras.cuStreamWaitEvent, "cuStreamWaitEvent");
  get(g_extras.cuDeviceGetDevResource, "cuDeviceGetDevResource");
  get(g_extras.cuDevSmResourceSplitByCount, "cuDevSmResourceSplitByCount");
  get(g_extras.cuDevResourceGenerateDesc, "cuDevResourceGenerateDesc");
  get(g_extras.cuGreenCtxCreate, "cuGreenCtxCreate");
  get(g_extras.cuGreenCtxStreamCreate, "cuGreenCtxStreamCreate");
  get(g_extras.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  get(g_extras.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  bool complete = g_extras.cuCtxGetCurrent && g_extras.cuCtxGetDevice &&
                  g_extras.cuCtxPushCurrent_v2 && g_extras.cuCtxPopCurrent_v2 &&
                  g_extras.cuCtxSynchronize && g_extras.cuStreamIsCapturing &&
                  g_extras.cuDeviceGetUuid && g_extras.cuEventCreate && g_extras.cuEventRecord &&
                  g_extras.cuEventSynchronize && g_extras.cuEventQuery;
  if (!complete) {
    Warn("libcuda.so.1 lacks a context or stream entry point; GPU sharing is off");
    return;
  }
  g_loaded.store(true, std::memory_order_release);
}

}  // namespace

bool LoadRealDriver() {
  if (g_loaded.load(std::memory_order_acquire)) return true;
  pthread_once(&g_once, LoadOnce);
  return g_loaded.load(std::memory_order_acquire);
}

void* RealFunction(HookId id) {
  void* fn = g_real[id].load(std::memory_order_relaxed);
  if (__builtin_expect(fn != nullptr, 1)) return fn;
  pthread_once(&g_once, LoadOnce);
  return g_real[id].load(std::memory_order_relaxed);
}

const DriverExtras& Extras() { return g_extras; }

int HookOfPointer(const void* fn) {
  const PointerEntry* end = g_by_pointer + g_by_pointer_count;
  const PointerEntry* it =
      std::lower_bound(static_cast<const PointerEntry*>(g_by_pointer), end, fn,
                       [](const PointerEntry& e, const void* p) { return e.fn < p; });
  return (it != end && it->fn == fn) ? it->hook : -1;
}

const char* HookName(int id) { return kHooks[id].name; }
void* HookWrapper(int id) { return kHooks[id].wrapper; }
bool HookIsGated(int id) { return kHooks[id].gated; }

int HookOfName(const char* name) {
  if (name == nullptr || name[0] != 'c' || name[1] != 'u') return -1;
  for (int i = 0; i < kNumHooks; ++i) {
    if (std::strcmp(kHooks[i].name, name) == 0) return i;
  }
  return -1;
}

}  // namespace gshare::shim
