// Microbenchmarks of the shim on a real GPU, driven through the driver API (dlopen of
// libcuda.so.1, so under `gshare run` every call goes through the shim's dlsym route).
// Builds with any C++20 compiler, no CUDA toolkit: kernels are PTX text JIT-compiled by
// the driver. Modes (times on stdout, one "key value" per line):
//   fastpath N          ns per cuLaunchKernel of an empty kernel (async, sync every 256)
//   gate N              ns per cuLaunchKernel rejected by the driver's argument check (grid 0):
//                       no GPU work, so bare vs gshare isolates the shim's gated path
//   grant N IDLE_MS     us from a launch after an idle release to its return (re-grant)
//   hog SECONDS DEPTH US  keep DEPTH spin kernels of US microseconds in flight
//   probe               us from the first launch to its return (waits for another holder)
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../../shim/driver/cuda_abi.h"

using namespace gs_cuda;

namespace {

const char* kPtx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry empty() { ret; }
.visible .entry spin(.param .u64 cycles) {
  .reg .u64 %rd<5>;
  .reg .pred %p;
  ld.param.u64 %rd1, [cycles];
  mov.u64 %rd2, %clock64;
LOOP:
  mov.u64 %rd3, %clock64;
  sub.u64 %rd4, %rd3, %rd2;
  setp.lt.u64 %p, %rd4, %rd1;
  @%p bra LOOP;
  ret;
}
)";

struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuModuleLoadData)(CUmodule*, const void*);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void**, void**);
  CUresult (*cuCtxSynchronize)();
} d;

double NowUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void Check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "lease_bench: %s failed: %d\n", what, r);
    std::exit(1);
  }
}

template <typename T>
void Load(void* lib, T& slot, const char* name) {
  slot = reinterpret_cast<T>(dlsym(lib, name));
  if (slot == nullptr) {
    std::fprintf(stderr, "lease_bench: no %s\n", name);
    std::exit(1);
  }
}

void Percentiles(const char* key, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&v](double q) { return v[static_cast<size_t>(q * (v.size() - 1))]; };
  std::printf("%s_median_us %.1f\n%s_p90_us %.1f\n%s_max_us %.1f\n", key, at(0.5), key, at(0.9),
              key, v.back());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  std::string mode = argv[1];
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (lib == nullptr) return 1;
  Load(lib, d.cuInit, "cuInit");
  Load(lib, d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  Load(lib, d.cuCtxSetCurrent, "cuCtxSetCurrent");
  Load(lib, d.cuModuleLoadData, "cuModuleLoadData");
  Load(lib, d.cuModuleGetFunction, "cuModuleGetFunction");
  Load(lib, d.cuLaunchKernel, "cuLaunchKernel");
  Load(lib, d.cuCtxSynchronize, "cuCtxSynchronize");
  Check(d.cuInit(0), "cuInit");
  CUcontext ctx;
  Check(d.cuDevicePrimaryCtxRetain(&ctx, 0), "retain");
  Check(d.cuCtxSetCurrent(ctx), "set current");
  CUmodule mod;
  Check(d.cuModuleLoadData(&mod, kPtx), "module");
  CUfunction empty, spin;
  Check(d.cuModuleGetFunction(&empty, mod, "empty"), "empty");
  Check(d.cuModuleGetFunction(&spin, mod, "spin"), "spin");
  auto launch_empty = [](CUfunction f) {
    return d.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr);
  };
  if (mode == "fastpath") {
    int n = argc > 2 ? std::atoi(argv[2]) : 200000;
    Check(launch_empty(empty), "warm-up");
    Check(d.cuCtxSynchronize(), "sync");
    double launch_us = 0;
    for (int i = 0; i < n; ++i) {
      double t = NowUs();
      launch_empty(empty);
      launch_us += NowUs() - t;
      if (i % 256 == 255) d.cuCtxSynchronize();
    }
    d.cuCtxSynchronize();
    std::printf("launches %d\nlaunch_call_ns %.1f\n", n, launch_us * 1000 / n);
  } else if (mode == "gate") {
    int n = argc > 2 ? std::atoi(argv[2]) : 1000000;
    Check(launch_empty(empty), "warm-up");  // takes the lease under gshare
    double t0 = NowUs();
    for (int i = 0; i < n; ++i) {
      d.cuLaunchKernel(empty, 0, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr);
    }
    std::printf("rejected_launches %d\nrejected_launch_ns %.1f\n", n, (NowUs() - t0) * 1000 / n);
    d.cuCtxSynchronize();
  } else if (mode == "grant") {
    int n = argc > 2 ? std::atoi(argv[2]) : 30;
    int idle_ms = argc > 3 ? std::atoi(argv[3]) : 200;
    std::vector<double> t;
    for (int i = 0; i < n; ++i) {
      launch_empty(empty);
      d.cuCtxSynchronize();
      std::this_thread::sleep_for(std::chrono::milliseconds(idle_ms));  // lease idles out
      double t0 = NowUs();
      Check(launch_empty(empty), "launch");
      t.push_back(NowUs() - t0);
    }
    Percentiles("regrant", t);
  } else if (mode == "hog") {
    double seconds = argc > 2 ? std::atof(argv[2]) : 10;
    int depth = argc > 3 ? std::atoi(argv[3]) : 64;
    unsigned long long cycles = (argc > 4 ? std::atoll(argv[4]) : 1000) * 1980ull;  // ~1.98 GHz
    void* params[] = {&cycles};
    double end = NowUs() + seconds * 1e6;
    std::printf("hog_start_us %.0f\n", NowUs());
    std::fflush(stdout);
    while (NowUs() < end) {
      for (int i = 0; i < depth; ++i) {
        d.cuLaunchKernel(spin, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr);
      }
      d.cuCtxSynchronize();
    }
  } else if (mode == "probe") {
    double t0 = NowUs();
    Check(launch_empty(empty), "launch");
    std::printf("probe_wait_us %.1f\n", NowUs() - t0);
    d.cuCtxSynchronize();
  }
  return 0;
}
