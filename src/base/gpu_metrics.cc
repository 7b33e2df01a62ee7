// SampleGpus: NVML through dlopen (gpu_metrics.h). The library stays loaded and initialized
// once it answered: a live view samples every second.
#include "base/gpu_metrics.h"

#include <dlfcn.h>

namespace gshare {
namespace {

constexpr int kNvmlSuccess = 0;
constexpr unsigned kTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU

struct NvmlMemory {  // nvmlMemory_t
  unsigned long long total, free, used;
};
struct NvmlUtilization {  // nvmlUtilization_t
  unsigned gpu, memory;
};

struct Nvml {
  bool ok = false;
  int (*count)(unsigned*) = nullptr;
  int (*handle)(unsigned, void**) = nullptr;
  int (*uuid)(void*, char*, unsigned) = nullptr;
  int (*name)(void*, char*, unsigned) = nullptr;
  int (*memory)(void*, NvmlMemory*) = nullptr;
  int (*utilization)(void*, NvmlUtilization*) = nullptr;
  int (*temperature)(void*, unsigned, unsigned*) = nullptr;
  int (*power)(void*, unsigned*) = nullptr;
};

template <class F>
void Find(void* lib, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
}

const Nvml& Load() {
  static const Nvml nvml = [] {
    Nvml n;
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return n;
    auto init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
    Find(lib, "nvmlDeviceGetCount_v2", &n.count);
    Find(lib, "nvmlDeviceGetHandleByIndex_v2", &n.handle);
    Find(lib, "nvmlDeviceGetUUID", &n.uuid);
    Find(lib, "nvmlDeviceGetName", &n.name);
    Find(lib, "nvmlDeviceGetMemoryInfo", &n.memory);
    Find(lib, "nvmlDeviceGetUtilizationRates", &n.utilization);
    Find(lib, "nvmlDeviceGetTemperature", &n.temperature);
    Find(lib, "nvmlDeviceGetPowerUsage", &n.power);
    n.ok = init != nullptr && init() == kNvmlSuccess && n.count != nullptr && n.handle != nullptr &&
           n.uuid != nullptr;
    return n;
  }();
  return nvml;
}

}  // namespace

std::vector<GpuSample> SampleGpus() {
  const Nvml& n = Load();
  std::vector<GpuSample> out;
  unsigned count = 0;
  if (!n.ok || n.count(&count) != kNvmlSuccess) return out;
  for (unsigned i = 0; i < count; ++i) {
    void* dev = nullptr;
    char text[96] = {};
    if (n.handle(i, &dev) != kNvmlSuccess || n.uuid(dev, text, sizeof text) != kNvmlSuccess) {
      continue;
    }
    GpuSample s;
    s.index = static_cast<int>(i);
    s.uuid = text;
    if (n.name != nullptr && n.name(dev, text, sizeof text) == kNvmlSuccess) s.name = text;
    NvmlMemory m{};
    if (n.memory != nullptr && n.memory(dev, &m) == kNvmlSuccess) {
      s.memory_total = static_cast<int64_t>(m.total);
      s.memory_used = static_cast<int64_t>(m.used);
    }
    NvmlUtilization u{};
    if (n.utilization != nullptr && n.utilization(dev, &u) == kNvmlSuccess) {
      s.util_percent = static_cast<int>(u.gpu);
    }
    unsigned v = 0;
    if (n.temperature != nullptr && n.temperature(dev, kTemperatureGpu, &v) == kNvmlSuccess) {
      s.temperature_c = static_cast<int>(v);
    }
    if (n.power != nullptr && n.power(dev, &v) == kNvmlSuccess) s.power_mw = static_cast<int>(v);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace gshare
