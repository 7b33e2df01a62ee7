// Where pinning host memory spends its time, and whether it stalls the process's other driver
// calls (shim/memory/host_pool.h rests on the answer). No CUDA toolkit needed (dlopen
// libcuda.so.1):
//   g++ -O2 -std=c++20 -o /tmp/host_pin_probe test/bench/host_pin_probe.cc -ldl -lpthread
//   /tmp/host_pin_probe 4        # GiB per phase; ~20 s and 4 GiB of GPU memory on an H100
// Phases on GIB GiB each (one line each: seconds, s/GiB, the pinger's worst call and count):
//  hostalloc   cuMemHostAlloc
//  populate    mmap + MAP_POPULATE (no driver)
//  register    cuMemHostRegister of the populated range
//  thp         mmap + MADV_HUGEPAGE + memset, then register
//  repop       munmap + mmap + populate again (are guest pages cheaper the second time?)
// A second thread calls cuMemsetD8_v2(4 KiB) + cuCtxSynchronize in a loop; per phase: its max
// and count. Then DtoH/HtoD bandwidth into each kind.
#include <dlfcn.h>
#include <sys/mman.h>
#include <pthread.h>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <atomic>
#include <chrono>
#include <thread>
#include <cstdint>

typedef int CUresult;
typedef int CUdevice;
typedef void* CUcontext;
typedef unsigned long long CUdeviceptr;
#define F(name, ...) CUresult (*name)(__VA_ARGS__)
F(cuInit, unsigned);
F(cuDeviceGet, CUdevice*, int);
F(cuDevicePrimaryCtxRetain, CUcontext*, CUdevice);
F(cuCtxSetCurrent, CUcontext);
F(cuCtxSynchronize);
F(cuMemAlloc_v2, CUdeviceptr*, size_t);
F(cuMemHostAlloc, void**, size_t, unsigned);
F(cuMemFreeHost, void*);
F(cuMemHostRegister_v2, void*, size_t, unsigned);
F(cuMemHostUnregister, void*);
F(cuMemsetD8_v2, CUdeviceptr, unsigned char, size_t);
F(cuMemcpyDtoH_v2, void*, CUdeviceptr, size_t);
F(cuMemcpyHtoD_v2, CUdeviceptr, const void*, size_t);

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
static CUcontext ctx;
static CUdeviceptr small;
static std::atomic<bool> stop{false};
static std::atomic<double> maxlat{0};
static std::atomic<long> calls{0};
static void pinger() {
  cuCtxSetCurrent(ctx);
  while (!stop) {
    double t = now();
    cuMemsetD8_v2(small, 1, 4096);
    cuCtxSynchronize();
    double d = now() - t;
    if (d > maxlat) maxlat = d;
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}
static void phase_begin() {
  maxlat = 0;
  calls = 0;
}
static void phase_end(const char* name, double t0, size_t bytes) {
  double dt = now() - t0;
  printf("%-10s %.3f s  %.3f s/GiB  pinger: max %.1f ms, %ld calls\n", name, dt,
         dt / (bytes / double(1ull << 30)), maxlat.load() * 1e3, calls.load());
  fflush(stdout);
}
static void bw(const char* name, void* host, CUdeviceptr dev, size_t bytes) {
  double t = now();
  cuMemcpyDtoH_v2(host, dev, bytes);
  double a = now() - t;
  t = now();
  cuMemcpyHtoD_v2(dev, host, bytes);
  double b = now() - t;
  printf("%-10s DtoH %.1f GB/s  HtoD %.1f GB/s\n", name, bytes / a / 1e9, bytes / b / 1e9);
  fflush(stdout);
}

int main(int argc, char** argv) {
  size_t gib = argc > 1 ? atoi(argv[1]) : 2;
  size_t bytes = gib << 30;
  void* h = dlopen("libcuda.so.1", RTLD_NOW);
  if (!h) {
    printf("no libcuda\n");
    return 1;
  }
#define L(n) *(void**)&n = dlsym(h, #n)
  L(cuInit);
  L(cuDeviceGet);
  L(cuDevicePrimaryCtxRetain);
  L(cuCtxSetCurrent);
  L(cuCtxSynchronize);
  L(cuMemAlloc_v2);
  L(cuMemHostAlloc);
  L(cuMemFreeHost);
  L(cuMemHostRegister_v2);
  L(cuMemHostUnregister);
  L(cuMemsetD8_v2);
  L(cuMemcpyDtoH_v2);
  L(cuMemcpyHtoD_v2);
  CUdevice d;
  cuInit(0);
  cuDeviceGet(&d, 0);
  cuDevicePrimaryCtxRetain(&ctx, d);
  cuCtxSetCurrent(ctx);
  cuMemAlloc_v2(&small, 4096);
  CUdeviceptr dev;
  if (cuMemAlloc_v2(&dev, bytes) != 0) {
    printf("alloc failed\n");
    return 1;
  }
  std::thread t(pinger);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  phase_begin();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  phase_end("idle", now() - 0.5, bytes);

  phase_begin();
  double t0 = now();
  void* ha = nullptr;
  int rc = cuMemHostAlloc(&ha, bytes, 1);
  phase_end("hostalloc", t0, bytes);
  if (rc) printf("hostalloc rc %d\n", rc);

  phase_begin();
  t0 = now();
  void* pm = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  phase_end("populate", t0, bytes);

  phase_begin();
  t0 = now();
  rc = cuMemHostRegister_v2(pm, bytes, 1);
  phase_end("register", t0, bytes);
  if (rc) printf("register rc %d\n", rc);

  phase_begin();
  t0 = now();
  void* tm =
      mmap(nullptr, bytes + (2 << 20), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  char* ta = (char*)(((uintptr_t)tm + (2 << 20) - 1) & ~uintptr_t((2 << 20) - 1));
  int ma = madvise(ta, bytes, MADV_HUGEPAGE);
  memset(ta, 0, bytes);
  phase_end("thp-touch", t0, bytes);
  if (ma) printf("madvise failed\n");
  phase_begin();
  t0 = now();
  rc = cuMemHostRegister_v2(ta, bytes, 1);
  phase_end("thp-reg", t0, bytes);
  if (rc) printf("thp register rc %d\n", rc);

  bw("hostalloc", ha, dev, bytes);
  bw("register", pm, dev, bytes);
  bw("thp-reg", ta, dev, bytes);

  phase_begin();
  t0 = now();
  cuMemHostUnregister(pm);
  munmap(pm, bytes);
  phase_end("unreg+unmap", t0, bytes);
  phase_begin();
  t0 = now();
  pm = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1,
            0);
  phase_end("repopulate", t0, bytes);
  phase_begin();
  t0 = now();
  rc = cuMemHostRegister_v2(pm, bytes, 1);
  phase_end("reregister", t0, bytes);
  phase_begin();
  t0 = now();
  cuMemFreeHost(ha);
  phase_end("freehost", t0, bytes);
  phase_begin();
  t0 = now();
  rc = cuMemHostAlloc(&ha, bytes, 1);
  phase_end("hostalloc2", t0, bytes);
  stop = true;
  t.join();
  system("cat /sys/kernel/mm/transparent_hugepage/enabled");
  return 0;
}
