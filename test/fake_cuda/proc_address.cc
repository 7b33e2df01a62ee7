// cuGetProcAddress and cuGetProcAddress_v2 of the fake: answered from the fake's own table of
// exports (never dlsym, which the shim intercepts), with the driver's versioning rule: a base
// name resolves to the newest revision introduced at or before the caller's version, and with
// CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM to that revision's _ptsz/_ptds export if any.
#include <atomic>
#include <cstdint>
#include <string_view>

#include "fake_cuda_api.h"

namespace gs_cuda::fake {
namespace {

// "PFN_cuMemAlloc_v3020" -> 3020: hooks.def names each row's typedef after the version that
// introduced the row's signature.
constexpr int VersionOf(std::string_view pfn) {
  size_t at = pfn.rfind("_v");
  int v = 0;
  for (size_t i = at + 2; at != std::string_view::npos && i < pfn.size(); ++i) {
    if (pfn[i] < '0' || pfn[i] > '9') return 0;
    v = v * 10 + (pfn[i] - '0');
  }
  return v;
}
static_assert(VersionOf("PFN_cuMemAlloc_v3020") == 3020);

constexpr bool IsPerThread(std::string_view name) {
  return name.ends_with("_ptsz") || name.ends_with("_ptds");
}

// "cuMemcpyHtoDAsync_v2_ptsz" -> "cuMemcpyHtoDAsync": drops the stream suffix, then _v<N>.
constexpr std::string_view BaseOf(std::string_view name) {
  if (IsPerThread(name)) name.remove_suffix(5);
  size_t at = name.rfind("_v");
  if (at == std::string_view::npos || at + 2 == name.size()) return name;
  for (size_t i = at + 2; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return name;
  }
  return name.substr(0, at);
}
static_assert(BaseOf("cuMemcpy3DBatchAsync_v2_ptsz") == "cuMemcpy3DBatchAsync");
static_assert(BaseOf("cuMemcpy3D_v2") == "cuMemcpy3D");

struct ProcEntry {
  const char* name;  // the export
  const char* base;  // the name callers ask for; nullptr means BaseOf(name)
  void* fn;
  int version;  // CUDA version that introduced it (unused for _ptsz/_ptds rows)
};

#define FAKE_COUNT_ROW(...) +1
constexpr size_t kEntryCount = 0
#define GS_HOOK FAKE_COUNT_ROW
#include "driver/hooks.def"
#undef GS_HOOK
                               FAKE_CUDA_EXTRA_EXPORTS(FAKE_COUNT_ROW) +
                               1;  // + the cuGraphInstantiate alias

// A function-local static, initialized on first use: a constructor of another library may ask
// before this library's own initializers ran.
const ProcEntry* Table() {
  static const ProcEntry kTable[kEntryCount] = {
#define GS_HOOK(kind, name, pfn, params, args) \
  {#name, nullptr, reinterpret_cast<void*>(&gs_cuda::name), VersionOf(#pfn)},
#include "driver/hooks.def"
#undef GS_HOOK
#define FAKE_ROW(name, version, params) \
  {#name, nullptr, reinterpret_cast<void*>(&gs_cuda::name), version},
      FAKE_CUDA_EXTRA_EXPORTS(FAKE_ROW)
#undef FAKE_ROW
      // cuda.h 12.0 renamed cuGraphInstantiate to the WithFlags signature.
      {"cuGraphInstantiateWithFlags", "cuGraphInstantiate",
       reinterpret_cast<void*>(&gs_cuda::cuGraphInstantiateWithFlags), 12000},
  };
  return kTable;
}

// How often each export was handed out, for debugging (no reader yet).
std::atomic<uint64_t> g_resolved[kEntryCount];

std::string_view BaseOfEntry(const ProcEntry& e) {
  return e.base != nullptr ? std::string_view(e.base) : BaseOf(e.name);
}

// The table index that answers the query, or -1 with *status saying why not.
int Lookup(std::string_view symbol, int version, cuuint64_t flags,
           CUdriverProcAddressQueryResult* status) {
  const ProcEntry* table = Table();
  int best = -1;
  bool known = false;
  for (size_t i = 0; i < kEntryCount; ++i) {
    if (IsPerThread(table[i].name) || BaseOfEntry(table[i]) != symbol) continue;
    known = true;
    if (table[i].version <= version && (best < 0 || table[i].version > table[best].version)) {
      best = static_cast<int>(i);
    }
  }
  if (best < 0) {
    *status =
        known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return -1;
  }
  if ((flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0) {
    std::string_view chosen = table[best].name;
    for (size_t i = 0; i < kEntryCount; ++i) {
      std::string_view n = table[i].name;
      if (IsPerThread(n) && n.size() == chosen.size() + 5 && n.starts_with(chosen)) {
        best = static_cast<int>(i);
        break;
      }
    }
  }
  *status = CU_GET_PROC_ADDRESS_SUCCESS;
  return best;
}

CUresult GetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags,
                        CUdriverProcAddressQueryResult* status) {
  CUdriverProcAddressQueryResult ignored;
  if (status == nullptr) status = &ignored;
  if (symbol == nullptr || pfn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  int at = Lookup(symbol, version, flags, status);
  if (at < 0) {
    *pfn = nullptr;
    return CUDA_ERROR_NOT_FOUND;
  }
  g_resolved[at].fetch_add(1, std::memory_order_relaxed);
  *pfn = Table()[at].fn;
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace gs_cuda::fake

namespace gs_cuda {
extern "C" {

CUresult cuGetProcAddress(const char* symbol, void** pfn, int driverVersion,
                          cuuint64_t flags) noexcept {
  return fake::GetProcAddress(symbol, pfn, driverVersion, flags, nullptr);
}

CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int driverVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* symbolFound) noexcept {
  return fake::GetProcAddress(symbol, pfn, driverVersion, flags, symbolFound);
}

}  // extern "C"
}  // namespace gs_cuda
