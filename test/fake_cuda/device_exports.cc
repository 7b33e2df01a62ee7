// cuInit, versions and error strings, devices, contexts and modules of the fake driver: the
// calls a job makes before and around its submissions. Ordinal i (driver.h) is physical GPU p:
// "Fake GPU <p>" with FAKE_CUDA_MEM_BYTES of memory and p's UUID (physical_gpus.h).
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "driver.h"
#include "fake_cuda_api.h"
#include "memory.h"

namespace gs_cuda::fake {
namespace {

struct ErrorText {
  CUresult code;
  const char* name;
  const char* text;
};

constexpr ErrorText kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE",
     "the operation cannot be performed in the present state"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {CUDA_ERROR_NOT_PERMITTED, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

const ErrorText* FindError(CUresult code) {
  for (const ErrorText& e : kErrors) {
    if (e.code == code) return &e;
  }
  return nullptr;
}

CUresult DeviceUuid(CUuuid* uuid, CUdevice dev) {
  if (CUresult r = CheckDevice(dev)) return r;
  if (uuid == nullptr) return CUDA_ERROR_INVALID_VALUE;
  static_assert(sizeof uuid->bytes == kUuidBytes);
  PhysicalGpuUuid(PhysicalDevice(dev), reinterpret_cast<unsigned char*>(uuid->bytes));
  return CUDA_SUCCESS;
}

// A module is a name space of function handles; "loading" reads nothing from the image.
struct Function {
  std::string name;
};
struct Module {
  std::mutex mu;
  std::vector<Function*> functions;  // guarded by mu
};

}  // namespace
}  // namespace gs_cuda::fake

namespace gs_cuda {
extern "C" {

CUresult cuInit(unsigned int) noexcept { return fake::Init(); }

CUresult cuDriverGetVersion(int* driverVersion) noexcept {
  if (driverVersion == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *driverVersion = 13000;
  return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult error, const char** pStr) noexcept {
  if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const fake::ErrorText* e = fake::FindError(error);
  *pStr = e != nullptr ? e->text : nullptr;
  return e != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorName(CUresult error, const char** pStr) noexcept {
  if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const fake::ErrorText* e = fake::FindError(error);
  *pStr = e != nullptr ? e->name : nullptr;
  return e != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuDeviceGetCount(int* count) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *count = fake::GetSettings().devices;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice* device, int ordinal) noexcept {
  if (CUresult r = fake::CheckDevice(ordinal)) return r;
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char* name, int len, CUdevice dev) noexcept {
  if (CUresult r = fake::CheckDevice(dev)) return r;
  if (name == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  std::snprintf(name, static_cast<size_t>(len), "Fake GPU %d", fake::PhysicalDevice(dev));
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) noexcept {
  return fake::DeviceUuid(uuid, dev);
}
CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) noexcept {
  return fake::DeviceUuid(uuid, dev);
}

CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) noexcept {
  if (CUresult r = fake::CheckDevice(dev)) return r;
  if (bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *bytes = fake::GetSettings().mem_bytes;
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) noexcept {
  if (CUresult r = fake::CheckDevice(dev)) return r;
  if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  fake::Context* ctx = fake::PrimaryContext(dev);
  if (ctx == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  ++ctx->primary_refs;
  *pctx = reinterpret_cast<CUcontext>(ctx);
  return CUDA_SUCCESS;
}

// The primary context lives on after its last release: its streams keep their workers, which
// is what a job that retains it again expects anyway.
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) noexcept {
  if (CUresult r = fake::CheckDevice(dev)) return r;
  fake::Context* ctx = fake::PrimaryContext(dev);
  if (ctx == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  int refs = ctx->primary_refs.load();
  while (refs > 0 && !ctx->primary_refs.compare_exchange_weak(refs, refs - 1)) {
  }
  return refs > 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult cuCtxCreate_v2(CUcontext* pctx, unsigned int, CUdevice dev) noexcept {
  if (CUresult r = fake::CheckDevice(dev)) return r;
  if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  fake::Context* ctx = fake::Context::Create(dev, /*primary=*/false);
  if (ctx == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  if (!fake::PushContext(ctx)) {
    ctx->Destroy();
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  fake::AddHandle(ctx, fake::HandleKind::kContext);
  *pctx = reinterpret_cast<CUcontext>(ctx);
  return CUDA_SUCCESS;
}

CUresult cuCtxDestroy_v2(CUcontext ctx) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  if (!fake::IsHandle(ctx, fake::HandleKind::kContext)) return CUDA_ERROR_INVALID_CONTEXT;
  fake::Context* c = reinterpret_cast<fake::Context*>(ctx);
  if (c->primary()) return CUDA_ERROR_INVALID_CONTEXT;  // primary contexts are released instead
  fake::DropHandle(c);
  fake::ForgetContext(c);
  c->Destroy();
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  if (ctx != nullptr && !fake::IsHandle(ctx, fake::HandleKind::kContext)) {
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  fake::SetCurrentContext(reinterpret_cast<fake::Context*>(ctx));
  return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext* pctx) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pctx = reinterpret_cast<CUcontext>(fake::CurrentContext());
  return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  if (!fake::IsHandle(ctx, fake::HandleKind::kContext)) return CUDA_ERROR_INVALID_CONTEXT;
  return fake::PushContext(reinterpret_cast<fake::Context*>(ctx)) ? CUDA_SUCCESS
                                                                  : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuCtxPopCurrent_v2(CUcontext* pctx) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  fake::Context* ctx = fake::PopContext();
  if (ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  if (pctx != nullptr) *pctx = reinterpret_cast<CUcontext>(ctx);
  return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice* device) noexcept {
  fake::Context* ctx;
  if (CUresult r = fake::CheckContext(&ctx)) return r;
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *device = ctx->device();
  return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize() noexcept {
  fake::Context* ctx;
  if (CUresult r = fake::CheckContext(&ctx)) return r;
  ctx->Synchronize();
  return fake::StickyError();
}

// CUDA 13: the context to wait for is named (nullptr: the current one), as the runtime's
// cudaDeviceSynchronize calls it there.
CUresult cuCtxSynchronize_v2(CUcontext ctx) noexcept {
  if (ctx == nullptr) return cuCtxSynchronize();
  if (CUresult r = cuCtxPushCurrent_v2(ctx)) return r;
  CUresult r = cuCtxSynchronize();
  CUcontext popped;
  cuCtxPopCurrent_v2(&popped);
  return r;
}

CUresult cuModuleLoadData(CUmodule* module, const void* image) noexcept {
  fake::Context* ctx;
  if (CUresult r = fake::CheckContext(&ctx)) return r;
  if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
  fake::Module* m = new fake::Module;
  fake::AddHandle(m, fake::HandleKind::kModule);
  *module = reinterpret_cast<CUmodule>(m);
  return CUDA_SUCCESS;
}

CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int, CUjit_option*,
                            void**) noexcept {
  return cuModuleLoadData(module, image);
}

// A library is a module of the current context here (a real one loads on every context, lazily
// by default): its module is itself, and a kernel is a function of it.
CUresult cuLibraryLoadData(CUlibrary* library, const void* code, CUjit_option*, void**,
                           unsigned int, CUlibraryOption*, void**, unsigned int) noexcept {
  return cuModuleLoadData(reinterpret_cast<CUmodule*>(library), code);
}

CUresult cuLibraryGetModule(CUmodule* pMod, CUlibrary library) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  if (pMod == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!fake::IsHandle(library, fake::HandleKind::kModule)) return CUDA_ERROR_INVALID_HANDLE;
  *pMod = reinterpret_cast<CUmodule>(library);
  return CUDA_SUCCESS;
}

CUresult cuKernelGetFunction(CUfunction* pFunc, CUkernel kernel) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  if (pFunc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!fake::IsHandle(kernel, fake::HandleKind::kFunction)) return CUDA_ERROR_INVALID_HANDLE;
  *pFunc = reinterpret_cast<CUfunction>(kernel);
  return CUDA_SUCCESS;
}

// FAKE_CUDA_FAIL_GETFUNCTION_COUNT=K: the first K valid function lookups of the process fail
// with CUDA_ERROR_OUT_OF_MEMORY, as a real driver's do when lazy loading (CUDA_MODULE_LOADING,
// the default) loads the function's module then and the GPU has no room for it.
bool InjectGetFunctionFailure() {
  static fake::InjectedFailures failures("FAKE_CUDA_FAIL_GETFUNCTION_COUNT");
  return failures.Next();
}

CUresult cuModuleGetFunction(CUfunction* hfunc, CUmodule hmod, const char* name) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  if (hfunc == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!fake::IsHandle(hmod, fake::HandleKind::kModule)) return CUDA_ERROR_INVALID_HANDLE;
  if (InjectGetFunctionFailure()) return CUDA_ERROR_OUT_OF_MEMORY;
  fake::Module* m = reinterpret_cast<fake::Module*>(hmod);
  fake::Function* f = new fake::Function{name};
  {
    std::lock_guard<std::mutex> lock(m->mu);
    m->functions.push_back(f);
  }
  fake::AddHandle(f, fake::HandleKind::kFunction);
  *hfunc = reinterpret_cast<CUfunction>(f);
  return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule hmod) noexcept {
  if (CUresult r = fake::CheckInit()) return r;
  if (!fake::IsHandle(hmod, fake::HandleKind::kModule)) return CUDA_ERROR_INVALID_HANDLE;
  fake::Module* m = reinterpret_cast<fake::Module*>(hmod);
  fake::DropHandle(m);
  for (fake::Function* f : m->functions) {
    fake::DropHandle(f);
    delete f;
  }
  delete m;
  return CUDA_SUCCESS;
}

}  // extern "C"
}  // namespace gs_cuda
