// The NVML wrappers (nvml_view.h). Stateless apart from the real functions' addresses: each
// answer is computed from NVML, the environment and the daemon at the time of the call, so
// nvmlShutdown/nvmlInit cycles, forks and threads need no care. NVML calls are rare (a
// monitor polls about once a second), so the remap's few NVML lookups per call cost nothing
// that matters.
#include "hooks/nvml_view.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "driver/context_registry.h"
#include "driver/real_driver.h"
#include "lease/memory_view.h"
#include "memory/memory_engine.h"
#include "gshare/job_env.h"

namespace gshare::shim {
namespace {

using NvmlDevice = void*;  // nvmlDevice_t

// nvmlReturn_t values (nvml.h).
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlUninitialized = 1;
constexpr int kNvmlInvalidArgument = 2;
constexpr int kNvmlNotFound = 6;
constexpr int kNvmlFunctionNotFound = 13;

// nvmlMemory_t and nvmlMemory_v2_t (nvml.h), bytes.
struct NvmlMemory {
  unsigned long long total, free, used;
};
struct NvmlMemoryV2 {
  unsigned version;
  unsigned long long total, reserved, free, used;
};

// The wrapped exports, in the order of kWrapped below.
enum Wrapped : int {
  kGetCount,
  kGetCountV2,
  kGetHandleByIndex,
  kGetHandleByIndexV2,
  kGetIndex,
  kGetMemoryInfo,
  kGetMemoryInfoV2,
  kNumWrapped
};
// Called, not wrapped.
enum Helper : int { kGetHandleByUuid, kGetUuid, kNumHelpers };
constexpr const char* kHelperNames[kNumHelpers] = {"nvmlDeviceGetHandleByUUID",
                                                   "nvmlDeviceGetUUID"};

std::atomic<void*> g_real[kNumWrapped];
std::atomic<void*> g_helper[kNumHelpers];
std::atomic<void*> g_library{nullptr};  // a handle of libnvidia-ml.so.1 the program used

// NVML's function `name` as the program would find it: in the library it opened, else
// among the objects loaded after the shim (a program linked with NVML).
void* FindReal(const char* name) {
  void* lib = g_library.load(std::memory_order_acquire);
  void* fn = lib != nullptr ? RealDlsym(lib, name) : nullptr;
  return fn != nullptr ? fn : RealDlsym(RTLD_NEXT, name);
}

const char* WrappedName(int id);

template <class F>
F Real(int id) {
  void* fn = g_real[id].load(std::memory_order_acquire);
  if (fn == nullptr) {
    fn = FindReal(WrappedName(id));
    if (fn != nullptr) g_real[id].store(fn, std::memory_order_release);
  }
  return reinterpret_cast<F>(fn);
}

template <class F>
F HelperFn(Helper id) {
  void* fn = g_helper[id].load(std::memory_order_acquire);
  if (fn == nullptr) {
    fn = FindReal(kHelperNames[id]);
    if (fn != nullptr) g_helper[id].store(fn, std::memory_order_release);
  }
  return reinterpret_cast<F>(fn);
}

bool InJob() {
  const char* job = std::getenv(job_env::kJobId);
  return job != nullptr && job[0] != '\0' && std::strcmp(job, "0") != 0;
}

// The job's GPUs, in CUDA_VISIBLE_DEVICES order, into `out`: their count, or -1 when NVML's
// numbering stands (not in a gshare job, or CUDA_VISIBLE_DEVICES unset or not a list of GPU
// UUIDs). As CUDA does, the list ends at the first entry no GPU answers to. An NVML error
// other than "not found" is returned as -2 - error.
int VisibleGpus(NvmlDevice out[kMaxDevices]) {
  if (!InJob()) return -1;
  const char* list = std::getenv("CUDA_VISIBLE_DEVICES");
  if (list == nullptr || std::strncmp(list, "GPU-", 4) != 0) return -1;
  auto by_uuid = HelperFn<int (*)(const char*, NvmlDevice*)>(kGetHandleByUuid);
  if (by_uuid == nullptr) return -1;
  int n = 0;
  const char* p = list;
  while (*p != '\0' && n < kMaxDevices) {
    const char* end = std::strchr(p, ',');
    size_t len = end != nullptr ? static_cast<size_t>(end - p) : std::strlen(p);
    char uuid[96];
    if (len < 5 || len >= sizeof uuid || std::strncmp(p, "GPU-", 4) != 0) break;
    std::memcpy(uuid, p, len);
    uuid[len] = '\0';
    int r = by_uuid(uuid, &out[n]);
    if (r == kNvmlNotFound || r == kNvmlInvalidArgument) break;
    if (r != kNvmlSuccess) return -2 - r;
    ++n;
    if (end == nullptr) break;
    p = end + 1;
  }
  return n;
}

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// NVML's UUID text of `dev` ("GPU-" and 32 hex digits with dashes) as cuDeviceGetUuid's bytes.
bool UuidOf(NvmlDevice dev, proto::GpuUuid* out) {
  auto get = HelperFn<int (*)(NvmlDevice, char*, unsigned)>(kGetUuid);
  char text[96];
  if (get == nullptr || get(dev, text, sizeof text) != kNvmlSuccess) return false;
  if (std::strncmp(text, "GPU-", 4) != 0) return false;
  int n = 0;
  for (const char* p = text + 4; *p != '\0'; ++p) {
    if (*p == '-') continue;
    int hi = Hex(*p), lo = p[1] != '\0' ? Hex(p[1]) : -1;
    if (hi < 0 || lo < 0 || n == 16) return false;
    out->bytes[n++] = static_cast<uint8_t>(hi << 4 | lo);
    ++p;
  }
  return n == 16;
}

// The job's view of `dev`'s memory: total and used; false when the driver's numbers stand
// (an engine that does not move other jobs' memory, no daemon, not in a job).
bool JobView(NvmlDevice dev, unsigned long long* total, unsigned long long* used) {
  proto::MemoryEngine e = RequestedMemoryEngine();
  if (e != proto::MemoryEngine::kSwap && e != proto::MemoryEngine::kCheckpoint) return false;
  if (!InJob()) return false;
  proto::GpuUuid uuid;
  proto::MemViewMsg v{};
  if (!UuidOf(dev, &uuid) || !QueryJobMemory(uuid, &v)) return false;
  *total = *total > v.others_fixed ? *total - v.others_fixed : 0;
  *used = v.job_used < *total ? v.job_used : *total;
  return true;
}

int Count(int id, unsigned* count) {
  auto real = Real<int (*)(unsigned*)>(id);
  if (real == nullptr) return kNvmlFunctionNotFound;
  int r = real(count);
  NvmlDevice gpus[kMaxDevices];
  int n = r == kNvmlSuccess ? VisibleGpus(gpus) : -1;
  if (n <= -2) return -2 - n;
  if (n >= 0) *count = static_cast<unsigned>(n);
  return r;
}

int HandleByIndex(int id, unsigned index, NvmlDevice* device) {
  auto real = Real<int (*)(unsigned, NvmlDevice*)>(id);
  if (real == nullptr) return kNvmlFunctionNotFound;
  NvmlDevice gpus[kMaxDevices];
  int n = VisibleGpus(gpus);
  if (n == -1) return real(index, device);
  if (n <= -2) return -2 - n;
  if (device == nullptr || index >= static_cast<unsigned>(n)) return kNvmlInvalidArgument;
  *device = gpus[index];
  return kNvmlSuccess;
}

int Index(NvmlDevice device, unsigned* index) {
  auto real = Real<int (*)(NvmlDevice, unsigned*)>(kGetIndex);
  if (real == nullptr) return kNvmlFunctionNotFound;
  int r = real(device, index);
  if (r != kNvmlSuccess) return r;
  NvmlDevice gpus[kMaxDevices];
  int n = VisibleGpus(gpus);
  if (n == -1) return r;
  if (n <= -2) return -2 - n;
  for (int i = 0; i < n; ++i) {
    if (gpus[i] == device) {
      *index = static_cast<unsigned>(i);
      return r;
    }
  }
  return kNvmlNotFound;
}

int MemoryInfo(NvmlDevice device, void* out) {
  auto real = Real<int (*)(NvmlDevice, void*)>(kGetMemoryInfo);
  if (real == nullptr) return kNvmlFunctionNotFound;
  int r = real(device, out);
  auto* m = static_cast<NvmlMemory*>(out);
  if (r == kNvmlSuccess && JobView(device, &m->total, &m->used)) m->free = m->total - m->used;
  return r;
}

int MemoryInfoV2(NvmlDevice device, void* out) {
  auto real = Real<int (*)(NvmlDevice, void*)>(kGetMemoryInfoV2);
  if (real == nullptr) return kNvmlFunctionNotFound;
  int r = real(device, out);
  auto* m = static_cast<NvmlMemoryV2*>(out);
  if (r == kNvmlSuccess && JobView(device, &m->total, &m->used)) {
    unsigned long long taken = m->used + m->reserved;
    m->free = m->total > taken ? m->total - taken : 0;
  }
  return r;
}

}  // namespace
}  // namespace gshare::shim

namespace shim = gshare::shim;

#define GS_NVML extern "C" __attribute__((visibility("default"))) int

GS_NVML nvmlDeviceGetCount(unsigned* count) noexcept { return shim::Count(shim::kGetCount, count); }
GS_NVML nvmlDeviceGetCount_v2(unsigned* count) noexcept {
  return shim::Count(shim::kGetCountV2, count);
}
GS_NVML nvmlDeviceGetHandleByIndex(unsigned index, void** device) noexcept {
  return shim::HandleByIndex(shim::kGetHandleByIndex, index, device);
}
GS_NVML nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) noexcept {
  return shim::HandleByIndex(shim::kGetHandleByIndexV2, index, device);
}
GS_NVML nvmlDeviceGetIndex(void* device, unsigned* index) noexcept {
  return shim::Index(device, index);
}
// memory: nvmlMemory_t* and nvmlMemory_v2_t*.
GS_NVML nvmlDeviceGetMemoryInfo(void* device, void* memory) noexcept {
  return shim::MemoryInfo(device, memory);
}
GS_NVML nvmlDeviceGetMemoryInfo_v2(void* device, void* memory) noexcept {
  return shim::MemoryInfoV2(device, memory);
}

namespace gshare::shim {
namespace {

struct WrappedExport {
  const char* name;
  void* wrapper;
};
const WrappedExport kWrapped[kNumWrapped] = {
    {"nvmlDeviceGetCount", reinterpret_cast<void*>(&nvmlDeviceGetCount)},
    {"nvmlDeviceGetCount_v2", reinterpret_cast<void*>(&nvmlDeviceGetCount_v2)},
    {"nvmlDeviceGetHandleByIndex", reinterpret_cast<void*>(&nvmlDeviceGetHandleByIndex)},
    {"nvmlDeviceGetHandleByIndex_v2", reinterpret_cast<void*>(&nvmlDeviceGetHandleByIndex_v2)},
    {"nvmlDeviceGetIndex", reinterpret_cast<void*>(&nvmlDeviceGetIndex)},
    {"nvmlDeviceGetMemoryInfo", reinterpret_cast<void*>(&nvmlDeviceGetMemoryInfo)},
    {"nvmlDeviceGetMemoryInfo_v2", reinterpret_cast<void*>(&nvmlDeviceGetMemoryInfo_v2)},
};

const char* WrappedName(int id) { return kWrapped[id].name; }

}  // namespace

void* NvmlWrapperFor(void* handle, const char* name, void* real) {
  if (name == nullptr || std::strncmp(name, "nvml", 4) != 0) return nullptr;
  for (int i = 0; i < kNumWrapped; ++i) {
    if (std::strcmp(kWrapped[i].name, name) != 0) continue;
    // A lookup that found the shim's own export (RTLD_DEFAULT: the shim comes first) says
    // nothing about where NVML is.
    if (real != kWrapped[i].wrapper) {
      g_real[i].store(real, std::memory_order_release);
      if (handle != RTLD_DEFAULT && handle != RTLD_NEXT) {
        g_library.store(handle, std::memory_order_release);
      }
    }
    return kWrapped[i].wrapper;
  }
  return nullptr;
}

}  // namespace gshare::shim
