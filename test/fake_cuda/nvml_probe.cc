// nvml_probe: what NVML tells a program, as nvidia-smi and pynvml ask it. Two builds of this
// file reach NVML by the two routes the shim covers (shim/hooks/nvml_view.h):
//   nvml_probe         dlopen("libnvidia-ml.so.1") + dlsym, as pynvml's ctypes does;
//   nvml_probe_linked  linked against the fake NVML, as nvidia-smi-like programs are.
// Prints one line "count <v2> <v1>", then per GPU index i of the v2 count:
//   "gpu <i> uuid <UUID> index <nvmlDeviceGetIndex> total <T> used <U> free <F>
//    v2 <total> <reserved> <free> <used>"
// and "hidden <UUID>: <nvmlDeviceGetIndex's result>" for each --hidden UUID. Exit 1 with
// "nvml_probe: error <call> <code>" on stderr when a call fails.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

struct Memory {
  unsigned long long total, free, used;
};
struct MemoryV2 {
  unsigned version;
  unsigned long long total, reserved, free, used;
};

}  // namespace

// The calls, as nvml.h declares them (the dlsym build only takes their types).
extern "C" {
int nvmlInit_v2();
int nvmlDeviceGetCount_v2(unsigned*);
int nvmlDeviceGetCount(unsigned*);
int nvmlDeviceGetHandleByIndex_v2(unsigned, void**);
int nvmlDeviceGetHandleByUUID(const char*, void**);
int nvmlDeviceGetUUID(void*, char*, unsigned);
int nvmlDeviceGetIndex(void*, unsigned*);
int nvmlDeviceGetMemoryInfo(void*, Memory*);
int nvmlDeviceGetMemoryInfo_v2(void*, MemoryV2*);
}

#ifdef NVML_PROBE_LINKED
#define NVML(name) (&name)
#else
void* Library() {
  static void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  if (lib == nullptr) {
    std::fprintf(stderr, "nvml_probe: error dlopen %s\n", dlerror());
    std::exit(1);
  }
  return lib;
}
template <class F>
F Lookup(const char* name) {
  void* fn = dlsym(Library(), name);
  if (fn == nullptr) {
    std::fprintf(stderr, "nvml_probe: error dlsym-%s 0\n", name);
    std::exit(1);
  }
  return reinterpret_cast<F>(fn);
}
#define NVML(name) Lookup<decltype(&name)>(#name)  // declared above, never defined
#endif

#define CALL(name, ...)                                                       \
  do {                                                                        \
    int nvml_probe_r = NVML(name)(__VA_ARGS__);                               \
    if (nvml_probe_r != 0) {                                                  \
      std::fprintf(stderr, "nvml_probe: error %s %d\n", #name, nvml_probe_r); \
      std::exit(1);                                                           \
    }                                                                         \
  } while (0)

int main(int argc, char** argv) {
  CALL(nvmlInit_v2);
  unsigned count = 0, count_v1 = 0;
  CALL(nvmlDeviceGetCount_v2, &count);
  CALL(nvmlDeviceGetCount, &count_v1);
  std::printf("count %u %u\n", count, count_v1);
  for (unsigned i = 0; i < count; ++i) {
    void* dev = nullptr;
    char uuid[96];
    unsigned index = 0;
    Memory m{};
    MemoryV2 m2{};
    m2.version = sizeof(MemoryV2) | 2u << 24;
    CALL(nvmlDeviceGetHandleByIndex_v2, i, &dev);
    CALL(nvmlDeviceGetUUID, dev, uuid, sizeof uuid);
    CALL(nvmlDeviceGetIndex, dev, &index);
    CALL(nvmlDeviceGetMemoryInfo, dev, &m);
    CALL(nvmlDeviceGetMemoryInfo_v2, dev, &m2);
    std::printf("gpu %u uuid %s index %u total %llu used %llu free %llu v2 %llu %llu %llu %llu\n",
                i, uuid, index, m.total, m.used, m.free, m2.total, m2.reserved, m2.free, m2.used);
  }
  for (int a = 1; a + 1 < argc; a += 2) {
    if (std::strcmp(argv[a], "--hidden") != 0) continue;
    void* dev = nullptr;
    unsigned index = 0;
    CALL(nvmlDeviceGetHandleByUUID, argv[a + 1], &dev);
    std::printf("hidden %s: %d\n", argv[a + 1], NVML(nvmlDeviceGetIndex)(dev, &index));
  }
  return 0;
}
