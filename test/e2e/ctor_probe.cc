// A library whose constructor uses the GPU: preloaded after libgshare.so into a job, it
// submits work before main() and before any of the shim's own lazy initialization ran, as
// a framework's static initializer might. Acts only inside a gshare job
// (GSHARE_JOB_ID set). Reports on stderr; never exits the process.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "driver/cuda_abi.h"

using namespace gs_cuda;

__attribute__((constructor)) static void GpuWorkInConstructor() {
  if (std::getenv("GSHARE_JOB_ID") == nullptr) return;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (lib == nullptr) return;
  auto sym = [lib](const char* name) { return dlsym(lib, name); };
  auto init = reinterpret_cast<CUresult (*)(unsigned)>(sym("cuInit"));
  auto retain =
      reinterpret_cast<CUresult (*)(CUcontext*, CUdevice)>(sym("cuDevicePrimaryCtxRetain"));
  auto set = reinterpret_cast<CUresult (*)(CUcontext)>(sym("cuCtxSetCurrent"));
  auto load = reinterpret_cast<CUresult (*)(CUmodule*, const void*)>(sym("cuModuleLoadData"));
  auto get = reinterpret_cast<CUresult (*)(CUfunction*, CUmodule, const char*)>(
      sym("cuModuleGetFunction"));
  auto launch =
      reinterpret_cast<CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                    unsigned, unsigned, CUstream, void**, void**)>(
          sym("cuLaunchKernel"));
  auto sync = reinterpret_cast<CUresult (*)()>(sym("cuCtxSynchronize"));
  CUcontext ctx;
  CUmodule mod;
  CUfunction fn;
  unsigned ms = 30;
  void* params[] = {&ms};
  int launched = 0;
  if (init(0) == CUDA_SUCCESS && retain(&ctx, 0) == CUDA_SUCCESS && set(ctx) == CUDA_SUCCESS &&
      load(&mod, "probe") == CUDA_SUCCESS && get(&fn, mod, "sleep") == CUDA_SUCCESS) {
    for (int i = 0; i < 5; ++i) {
      if (launch(fn, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr) == CUDA_SUCCESS) ++launched;
    }
    sync();
  }
  std::fprintf(stderr, "ctor_probe: launched %d\n", launched);
}
