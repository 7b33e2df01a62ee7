// cumem_pool_check: sleep/wake cycles of the engine-shaped allocator (cumem_pool.h) with no
// framework above it, on any driver (the fake one in CI, the GPU's under test/gpu/sleep_wake.py's
// shell). Allocates "weights" (tag 0, offloaded at sleep) and a "KV cache" (tag 1, discarded),
// fills the weights with a known pattern, then runs --cycles cycles of: write the KV cache, sleep,
// read free memory, wake, read the weights back and compare every byte.
//
//   cumem_pool_check [--cycles N] [--weights-mib M] [--kv-mib K] [--hold-ms T]
//
// --hold-ms: how long each cycle sleeps (another job may use the memory meanwhile).
// Prints "cumem_pool_check: cycle I free asleep-awake D MiB" per cycle and
// "cumem_pool_check: ok N cycles W MiB weights" at the end. Exit: 0 ok, 1 a mismatch or a driver
// error (one line naming it), 2 bad arguments.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cumem_pool.h"
#include "driver/cuda_abi.h"

namespace {

using namespace gs_cuda;

struct Calls {
  CUresult (*init)(unsigned) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*primary_retain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*set_current)(CUcontext) = nullptr;
  CUresult (*mem_info)(size_t*, size_t*) = nullptr;
  CUresult (*htod)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*dtoh)(void*, CUdeviceptr, size_t) = nullptr;
};

int Fail(const std::string& what) {
  std::fprintf(stderr, "cumem_pool_check: %s\n", what.c_str());
  return 1;
}

unsigned char Pattern(size_t i, int salt) {
  return static_cast<unsigned char>((i * 131 + static_cast<size_t>(salt) * 17 + 7) % 251);
}

bool Fill(const Calls& c, CUdeviceptr dst, size_t bytes, int salt) {
  std::vector<unsigned char> buf(bytes);
  for (size_t i = 0; i < bytes; ++i) buf[i] = Pattern(i, salt);
  return c.htod(dst, buf.data(), bytes) == CUDA_SUCCESS;
}

// 0: equal, 1: differs, 2: the copy failed.
int Compare(const Calls& c, CUdeviceptr src, size_t bytes, int salt) {
  std::vector<unsigned char> buf(bytes);
  if (c.dtoh(buf.data(), src, bytes) != CUDA_SUCCESS) return 2;
  for (size_t i = 0; i < bytes; ++i)
    if (buf[i] != Pattern(i, salt)) return 1;
  return 0;
}

bool ParseInt(const char* text, long* out) {
  char* end = nullptr;
  *out = std::strtol(text, &end, 10);
  return end != text && *end == '\0' && *out >= 0;
}

}  // namespace

int main(int argc, char** argv) {
  long cycles = 5, weights_mib = 24, kv_mib = 40, hold_ms = 0;
  for (int i = 1; i < argc; ++i) {
    long* target = nullptr;
    if (std::strcmp(argv[i], "--cycles") == 0) target = &cycles;
    if (std::strcmp(argv[i], "--weights-mib") == 0) target = &weights_mib;
    if (std::strcmp(argv[i], "--kv-mib") == 0) target = &kv_mib;
    if (std::strcmp(argv[i], "--hold-ms") == 0) target = &hold_ms;
    if (target == nullptr || i + 1 >= argc || !ParseInt(argv[i + 1], target)) {
      std::fprintf(stderr, "cumem_pool_check: bad argument %s\n", argv[i]);
      return 2;
    }
    ++i;
  }
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return Fail(std::string("dlopen: ") + dlerror());
  Calls c;
  c.init = reinterpret_cast<decltype(c.init)>(dlsym(lib, "cuInit"));
  c.device_get = reinterpret_cast<decltype(c.device_get)>(dlsym(lib, "cuDeviceGet"));
  c.primary_retain =
      reinterpret_cast<decltype(c.primary_retain)>(dlsym(lib, "cuDevicePrimaryCtxRetain"));
  c.set_current = reinterpret_cast<decltype(c.set_current)>(dlsym(lib, "cuCtxSetCurrent"));
  c.mem_info = reinterpret_cast<decltype(c.mem_info)>(dlsym(lib, "cuMemGetInfo_v2"));
  c.htod = reinterpret_cast<decltype(c.htod)>(dlsym(lib, "cuMemcpyHtoD_v2"));
  c.dtoh = reinterpret_cast<decltype(c.dtoh)>(dlsym(lib, "cuMemcpyDtoH_v2"));
  if (!c.init || !c.device_get || !c.primary_retain || !c.set_current || !c.mem_info || !c.htod ||
      !c.dtoh)
    return Fail("a driver export is missing");
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  if (c.init(0) != CUDA_SUCCESS || c.device_get(&dev, 0) != CUDA_SUCCESS ||
      c.primary_retain(&ctx, dev) != CUDA_SUCCESS || c.set_current(ctx) != CUDA_SUCCESS)
    return Fail("no context on device 0");

  const size_t mib = 1 << 20;
  // Two weight allocations of different sizes (one not a multiple of the granularity) and the KV
  // cache, as an engine's pool holds them.
  const size_t w1 = static_cast<size_t>(weights_mib) * mib / 3 + 12345;
  const size_t w2 = static_cast<size_t>(weights_mib) * mib - w1;
  const size_t kv = static_cast<size_t>(kv_mib) * mib;
  gs_cumem_set_tag(0);
  void* p1 = gs_cumem_alloc(static_cast<ssize_t>(w1), 0, nullptr);
  void* p2 = gs_cumem_alloc(static_cast<ssize_t>(w2), 0, nullptr);
  gs_cumem_set_tag(1);
  void* pkv = kv > 0 ? gs_cumem_alloc(static_cast<ssize_t>(kv), 0, nullptr) : nullptr;
  if (p1 == nullptr || p2 == nullptr || (kv > 0 && pkv == nullptr))
    return Fail(std::string("alloc: ") + gs_cumem_error());
  const auto d1 = reinterpret_cast<CUdeviceptr>(p1), d2 = reinterpret_cast<CUdeviceptr>(p2),
             dkv = reinterpret_cast<CUdeviceptr>(pkv);
  if (!Fill(c, d1, w1, 1) || !Fill(c, d2, w2, 2)) return Fail("filling the weights failed");

  for (long cycle = 0; cycle < cycles; ++cycle) {
    if (kv > 0 && !Fill(c, dkv, kv, 100 + static_cast<int>(cycle)))
      return Fail("writing the KV cache failed in cycle " + std::to_string(cycle));
    size_t free_awake = 0, free_asleep = 0, total = 0;
    c.mem_info(&free_awake, &total);
    if (int rc = gs_cumem_sleep(1u << 0); rc != 0)
      return Fail("sleep in cycle " + std::to_string(cycle) + ": " + gs_cumem_error());
    if (gs_cumem_bytes(~0u, 1) != 0) return Fail("memory still mapped after sleep");
    c.mem_info(&free_asleep, &total);
    if (hold_ms > 0) usleep(static_cast<useconds_t>(hold_ms) * 1000);
    if (int rc = gs_cumem_wake(); rc != 0)
      return Fail("wake in cycle " + std::to_string(cycle) + ": " + gs_cumem_error());
    const int r1 = Compare(c, d1, w1, 1), r2 = Compare(c, d2, w2, 2);
    if (r1 == 2 || r2 == 2)
      return Fail("reading the weights failed in cycle " + std::to_string(cycle));
    if (r1 != 0 || r2 != 0)
      return Fail("weights differ after wake in cycle " + std::to_string(cycle));
    std::printf("cumem_pool_check: cycle %ld free asleep-awake %lld MiB\n", cycle,
                (static_cast<long long>(free_asleep) - static_cast<long long>(free_awake)) /
                    static_cast<long long>(mib));
    std::fflush(stdout);
  }
  gs_cumem_free(p1, 0, 0, nullptr);
  gs_cumem_free(p2, 0, 0, nullptr);
  if (pkv != nullptr) gs_cumem_free(pkv, 0, 0, nullptr);
  std::printf("cumem_pool_check: ok %ld cycles %ld MiB weights\n", cycles, weights_mib);
  return 0;
}
