// The exported driver entry points, generated from hooks.def. Each is a thin noexcept
// wrapper: it finds the real function, does the kind's bookkeeping (gate, allocation table,
// capture count) and returns the driver's own result. Nothing but a CUresult crosses the
// C ABI. Any thread.
#include <atomic>
#include <string_view>
#include <type_traits>

#include "memory/alloc_table.h"
#include "memory/ipc_import.h"
#include "driver/census.h"
#include "driver/context_registry.h"
#include "lease/inflight_window.h"
#include "lease/priority_lane.h"
#include "lease/priority_window.h"
#include "lease/sm_partition.h"
#include "driver/hook_decls.h"
#include "lease/lease_client.h"
#include "lease/mps_arrival.h"
#include "driver/real_driver.h"
#include "shim_log.h"
#include "memory/managed_space.h"
#include "memory/memory_engine.h"
#include "memory/mono_clock.h"
#include "memory/others_view.h"
#include "memory/swap_space.h"
#include "memory/swap_space_internal.h"

namespace gshare::shim {
namespace {

using namespace gs_cuda;

AllocTable g_allocations;  // device pointers
AllocTable g_vmm_handles;  // cuMemCreate handles

constexpr bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
// _ptsz/_ptds exports interpret stream 0 as the per-thread default stream.
constexpr bool IsPerThread(std::string_view name) {
  return EndsWith(name, "_ptsz") || EndsWith(name, "_ptds");
}

// The stream a submission goes to, found by type among its arguments.
struct StreamArg {
  bool present = false;
  CUstream stream = nullptr;
  bool attributes = false;  // a launch configuration with launch attributes
};
inline void FindStream(StreamArg&) {}
template <typename T, typename... Rest>
inline void FindStream(StreamArg& out, const T& first, const Rest&... rest) {
  if constexpr (std::is_same_v<T, CUstream>) {
    if (!out.present) out = {true, first};
  } else if constexpr (std::is_same_v<T, const CUlaunchConfig*>) {
    if (!out.present && first != nullptr) out = {true, first->hStream, first->numAttrs != 0};
  }
  FindStream(out, rest...);
}

// Whether a submission may run on the SM partition (lease/sm_partition.h): a plain kernel
// launch. Cooperative and attributed launches (clusters, programmatic dependencies) stay.
constexpr bool Narrowable(HookId id, const StreamArg& s) {
  switch (id) {
    case kHook_cuLaunchKernel:
    case kHook_cuLaunchKernel_ptsz: return true;
    case kHook_cuLaunchKernelEx:
    case kHook_cuLaunchKernelEx_ptsz: return !s.attributes;
    default: return false;
  }
}

// A submission's shape: a key of what sizes its work (kernel_costs.h), mixed from the kernel
// function, the graph, the 32-bit arguments (grid, block, shared memory, flags) and the byte
// counts to a power of two. Pointers and device addresses are left out: they differ between
// calls of the same work. Computed only by a process that yields (Submission).
inline void Mix(uint64_t& shape, uint64_t v) { shape = (shape ^ v) * 0x100000001b3ull; }
inline void MixShape(uint64_t&) {}
template <typename T, typename... Rest>
inline void MixShape(uint64_t& shape, const T& first, const Rest&... rest) {
  if constexpr (std::is_same_v<T, const CUlaunchConfig*>) {
    if (first != nullptr) {
      Mix(shape, (uint64_t{first->gridDimX} << 32) | first->blockDimX);
      Mix(shape, (uint64_t{first->gridDimY} << 32) | first->gridDimZ);
      Mix(shape, (uint64_t{first->blockDimY} << 32) | first->blockDimZ);
    }
  } else if constexpr (std::is_same_v<T, CUfunction> || std::is_same_v<T, CUgraphExec>) {
    Mix(shape, reinterpret_cast<uintptr_t>(first));
  } else if constexpr (std::is_same_v<T, unsigned int>) {
    Mix(shape, first);
  } else if constexpr (std::is_same_v<T, size_t>) {
    Mix(shape, first == 0 ? 0 : 64 - __builtin_clzll(first));
  }
  MixShape(shape, rest...);
}

// Whether `s` is capturing (work is recorded into a graph, not run). When the driver cannot
// say, `if_unknown` is the answer: a submission then must not block (the call fails in the
// driver on its own); cuStreamEndCapture must not count a capture it cannot see.
bool StreamCapturing(CUstream s, bool per_thread, bool if_unknown) {
  if (s == nullptr && per_thread) s = CuStreamPerThread();
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (Extras().cuStreamIsCapturing(s, &status) != CUDA_SUCCESS) return if_unknown;
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

// Holds the device gate for the duration of one submission. `shape_of` returns the
// submission's shape (MixShape over its arguments); it is called only when the process yields.
class Submission {
 public:
  template <typename ShapeOf>
  Submission(HookId id, bool per_thread, StreamArg stream, const ShapeOf& shape_of) {
    CensusCount(id);
    int device = ContextRegistry::Get().CurrentDevice();
    if (device < 0) return;  // no current context: the driver rejects the call itself
    if (g_active_captures.load(std::memory_order_relaxed) != 0 && stream.present &&
        StreamCapturing(stream.stream, per_thread, /*if_unknown=*/true)) {
      if (g_census_on) g_census_captured.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    DeviceGate& gate = GateOf(device);
    bool waited_gap_start = false;
    bool narrow = false;
    for (;;) {
      YieldToHigher(device);
      if (__builtin_expect(Yields(device), 0) && stream.present) {
        if (shape_ == 0) shape_ = shape_of() ^ id;
        narrow = false;
        if (!PriorityWindow::Admit(device, shape_, stream.stream, per_thread,
                                   Narrowable(id, stream), &waited_gap_start, &narrow)) {
          continue;  // it waited for its queued work or the higher job's gap: look again
        }
      }
      if (__builtin_expect(gate.TryEnter(), 1)) break;
      LeaseClient::Get().EnterSlow(device);
      // The grant may have come with a seat that yields (the daemon seats a process before
      // it grants): check again, outside the gate.
      if (ConcurrentOn(device) || !HigherBusy(device)) break;
      gate.Exit();
    }
    if (__builtin_expect(gate.MarkActive(), 0)) GapEnds(device);
    MarkBusy(device);
    gate_ = &gate;
    device_ = device;
    stream_ = stream;
    // A seat that yields may have come with the grant, after the loop's checks.
    if (__builtin_expect(Yields(device), 0) && stream.present && shape_ == 0) {
      shape_ = shape_of() ^ id;
    }
    per_thread_ = per_thread;
    if (__builtin_expect(narrow, 0))
      narrowed_ = SmPartition::Enter(device, stream.stream, per_thread);
  }
  ~Submission() {
    if (gate_ == nullptr) return;
    if (__builtin_expect(narrowed_.green != nullptr, 0)) {
      SmPartition::Leave(narrowed_);
      PriorityWindow::AfterNarrow(device_, stream_.stream, per_thread_);
      gate_->Exit();
      return;
    }
    // Synchronous calls (no stream) leave nothing queued; streamed ones are windowed
    // while another job waits.
    if (__builtin_expect(InflightWindow::Contended(device_), 0) && stream_.present) {
      InflightWindow::AfterSubmission(device_, stream_.stream, per_thread_);
    }
    if (__builtin_expect(Yields(device_), 0) && stream_.present) {
      PriorityWindow::AfterSubmission(device_, stream_.stream, per_thread_, shape_);
    }
    gate_->Exit();
  }
  Submission(const Submission&) = delete;
  Submission& operator=(const Submission&) = delete;

  // Whether the launch goes to the SM partition; then Route gives each argument as the real
  // call takes it there (the companion stream in place of the application's).
  bool Narrow() const { return narrowed_.green != nullptr; }
  template <typename T>
  T Route(T arg) {
    if constexpr (std::is_same_v<T, CUstream>) {
      return narrowed_.green;
    } else if constexpr (std::is_same_v<T, const CUlaunchConfig*>) {
      config_ = *arg;
      config_.hStream = narrowed_.green;
      return &config_;
    } else {
      return arg;
    }
  }

 private:
  DeviceGate* gate_ = nullptr;
  int device_ = -1;
  StreamArg stream_;
  uint64_t shape_ = 0;
  bool per_thread_ = false;
  Narrowed narrowed_;
  CUlaunchConfig config_;  // a narrowed cuLaunchKernelEx's configuration
};

template <typename Fn>
inline Fn Real(HookId id) {
  if (!LoadRealDriver()) return nullptr;
  return reinterpret_cast<Fn>(RealFunction(id));
}

int CurrentDeviceOrZero() {
  int d = ContextRegistry::Get().CurrentDevice();
  return d < 0 ? 0 : d;
}

void TrackAlloc(AllocTable& table, uint64_t key, int device, uint64_t bytes) {
  if (table.Add(key, device, bytes)) LeaseClient::Get().AddDeviceBytes(device, bytes);
}

void TrackFree(AllocTable& table, uint64_t key) {
  int device;
  uint64_t bytes;
  if (table.Remove(key, &device, &bytes)) {
    LeaseClient::Get().AddDeviceBytes(device, -static_cast<int64_t>(bytes));
  }
}

// Device of the calling thread's context when an engine serves this process's allocations,
// else -1 (then the driver serves them and they count as memory that cannot move).
int EngineDevice() {
  if (!Engine().ServesAllocations()) return -1;
  return ContextRegistry::Get().CurrentDevice();
}

// A stream-ordered allocation the engine may serve: work being captured into a graph goes to
// the driver's pool (the graph owns that memory).
int EngineDeviceForStream(CUstream s, bool per_thread) {
  int device = EngineDevice();
  if (device >= 0 && g_active_captures.load(std::memory_order_relaxed) != 0 &&
      StreamCapturing(s, per_thread, /*if_unknown=*/true)) {
    return -1;
  }
  return device;
}

// Once per process: why a legacy IPC export of engine memory was refused (GS_HOOK_IPCEXPORT):
// the managed engine's memory, or the swap engine's where it cannot be shared.
void WarnIpcOnce(bool managed) {
  static std::atomic<bool> told{false};
  if (told.exchange(true)) return;
  if (managed) {
    Warn(
        "cuIpcGetMemHandle: memory of the managed engine has no legacy IPC handle; run a job "
        "that shares CUDA memory between processes with --memory swap or off");
  } else {
    Warn(
        "cuIpcGetMemHandle: the driver gives the swap engine's memory no file descriptor to "
        "share; run a job that shares CUDA memory between processes with --memory off");
  }
}

// What a DRIVERALLOC call that found the GPU full asks for (GS_HOOK_DRIVERALLOC).
inline constexpr uint64_t kDriverOwnBytes = 64ull << 20;

// A driver allocation of `bytes`: memory no engine serves (under the checkpoint engine all of
// it; under the swap engine the driver's own, DRIVERALLOC, and what cuMemCreate leaves to the
// driver). One that finds the GPU full waits for room, up to 30 s, as the swap engine's own
// allocations do: it asks for the lease with the bytes as its demand, and the daemon moves
// other jobs' memory away (swaps or checkpoints it) to make room for the holder. Without
// either engine the driver's answer stands.
template <typename F>
CUresult DriverAlloc(uint64_t bytes, F alloc) {
  CUresult r = alloc();
  if (r != CUDA_ERROR_OUT_OF_MEMORY || !Engine().MovesOthers()) {
    return r;
  }
  int device = CurrentDeviceOrZero();
  LeaseClient& client = LeaseClient::Get();
  client.SetDemand(device, bytes);
  for (int tries = 0; r == CUDA_ERROR_OUT_OF_MEMORY && tries < 3000; ++tries) {
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, nullptr);
    DeviceGate& gate = GateOf(device);
    if (!gate.TryEnter()) client.EnterSlow(device);
    gate.MarkActive();
    r = alloc();
    gate.Exit();
  }
  client.SetDemand(device, 0);
  return r;
}

// Device of the calling thread's context when cuMemGetInfo is virtualized for this process
// (MemoryEngine::MovesOthers), else -1.
int VirtualMemDevice() {
  if (!Engine().MovesOthers()) return -1;
  return ContextRegistry::Get().CurrentDevice();
}

// cuMemAllocPitch: rows padded to 512 bytes (the pitch alignment the driver uses for
// cudaMallocPitch on current GPUs). ElementSizeBytes must be 4, 8 or 16 (cuMemAllocPitch).
CUresult EngineAllocPitch(int device, CUdeviceptr* dptr, size_t* pitch, size_t width, size_t height,
                          unsigned element) {
  if (dptr == nullptr || pitch == nullptr || width == 0 || height == 0 ||
      (element != 4 && element != 8 && element != 16)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  size_t p = (width + 511) / 512 * 512;
  uint64_t bytes = static_cast<uint64_t>(p) * height;
  CUresult r = CUDA_ERROR_NOT_SUPPORTED;
  if (Engine().Alloc(device, bytes, dptr, &r) && r == CUDA_SUCCESS) *pitch = p;
  return r;
}

// What other jobs hold on `device` that cannot move, as this process is shown it: a drop shows
// only once it has lasted OthersView::kHoldNs (memory/others_view.h says why).
constinit OthersView g_others_views[kMaxDevices];  // trivially destroyed: no exit-time work

uint64_t OthersShown(int device) {
  const uint64_t current = LeaseClient::Get().OthersFixed(device);
  if (device < 0 || device >= kMaxDevices) return current;
  return g_others_views[device].Report(current, MonoNowNs());
}

// What the process may use on its device as if it were alone on the GPU: the GPU less
// what other jobs hold that cannot move, less its own allocations and its context
// (~0.5 GiB: docs/memory.md, "What a job sees").
void VirtualMemInfo(int device, size_t* free_bytes, size_t* total_bytes) {
  const uint64_t kContextReserve = swap_internal::ContextReserve(*total_bytes);
  uint64_t others = OthersShown(device);
  uint64_t total = *total_bytes > others ? *total_bytes - others : 0;
  int64_t fixed = LeaseClient::Get().DeviceBytes(device);
  uint64_t own = Engine().Allocated(device) + (fixed > 0 ? fixed : 0) + kContextReserve;
  *total_bytes = total;
  *free_bytes = total > own ? total - own : 0;
}

// cuGetProcAddress: the real driver resolves name, version and flags; the shim then swaps
// the returned pointer for the wrapper of the same export, so the caller's ABI (_v2, _ptsz,
// _ptds) is exactly what the driver chose. A request for "cuGetProcAddress" itself thus
// returns the shim's cuGetProcAddress and every later lookup stays hooked.
inline void SwapForWrapper(CUresult r, void** pfn) {
  if (r != CUDA_SUCCESS || pfn == nullptr || *pfn == nullptr) return;
  int id = HookOfPointer(*pfn);
  if (id >= 0) *pfn = HookWrapper(id);
}

}  // namespace
}  // namespace gshare::shim

#define GS_EXPORT extern "C" __attribute__((visibility("default")))
#define GS_REAL(name, params)                                                               \
  auto gs_real_fn = ::gshare::shim::Real<CUresult(*) params>(::gshare::shim::kHook_##name); \
  if (gs_real_fn == nullptr) return CUDA_ERROR_NOT_INITIALIZED

#define GS_HOOK_GATE(name, params, args)                                                        \
  GS_EXPORT CUresult name params noexcept {                                                     \
    GS_REAL(name, params);                                                                      \
    ::gshare::shim::StreamArg gs_stream;                                                        \
    [&](auto&&... a) { ::gshare::shim::FindStream(gs_stream, a...); } args;                     \
    auto gs_shape = [&] {                                                                       \
      uint64_t shape = 0;                                                                       \
      [&](auto&&... a) { ::gshare::shim::MixShape(shape, a...); } args;                         \
      return shape;                                                                             \
    };                                                                                          \
    ::gshare::shim::Submission gs_sub(::gshare::shim::kHook_##name,                             \
                                      ::gshare::shim::IsPerThread(#name), gs_stream, gs_shape); \
    if (__builtin_expect(gs_sub.Narrow(), 0)) {                                                 \
      return [&](auto&&... a) { return gs_real_fn(gs_sub.Route(a)...); } args;                  \
    }                                                                                           \
    return gs_real_fn args;                                                                     \
  }

// The driver reads the MPS variables in cuInit: an arriving client asks the daemon first
// whether it still joins gshare's MPS server (lease/mps_arrival.h).
#define GS_HOOK_INIT(name, params, args)    \
  GS_EXPORT CUresult name params noexcept { \
    GS_REAL(name, params);                  \
    ::gshare::shim::BeforeCuInit();         \
    return gs_real_fn args;                 \
  }

#define GS_HOOK_PROCADDR(name, params, args) \
  GS_EXPORT CUresult name params noexcept {  \
    GS_REAL(name, params);                   \
    CUresult r = gs_real_fn args;            \
    ::gshare::shim::SwapForWrapper(r, pfn);  \
    return r;                                \
  }

#include "hooks/alloc_hooks.h"
#include "hooks/memory_hooks.h"

#define GS_HOOK_CAPTURE_BEGIN(name, params, args)                          \
  GS_EXPORT CUresult name params noexcept {                                \
    GS_REAL(name, params);                                                 \
    CUresult r = gs_real_fn args;                                          \
    if (r == CUDA_SUCCESS) ::gshare::shim::g_active_captures.fetch_add(1); \
    return r;                                                              \
  }

#define GS_HOOK_CAPTURE_END(name, params, args)                                              \
  GS_EXPORT CUresult name params noexcept {                                                  \
    GS_REAL(name, params);                                                                   \
    bool was =                                                                               \
        ::gshare::shim::StreamCapturing(hStream, ::gshare::shim::IsPerThread(#name), false); \
    CUresult r = gs_real_fn args;                                                            \
    if (was) ::gshare::shim::g_active_captures.fetch_sub(1);                                 \
    return r;                                                                                \
  }

#define GS_HOOK_CTXDESTROY(name, params, args)          \
  GS_EXPORT CUresult name params noexcept {             \
    GS_REAL(name, params);                              \
    ::gshare::shim::ContextRegistry::Get().Forget(ctx); \
    return gs_real_fn args;                             \
  }

// Waiting for the GPU is not idleness (lease_client.h, g_syncing).
#define GS_HOOK_SYNC(name, params, args)                       \
  GS_EXPORT CUresult name params noexcept {                    \
    GS_REAL(name, params);                                     \
    ::gshare::shim::CensusCount(::gshare::shim::kHook_##name); \
    ::gshare::shim::SyncScope gs_sync;                         \
    return gs_real_fn args;                                    \
  }

// Polling for completion that is not there yet counts as waiting too.
#define GS_HOOK_QUERY(name, params, args)                         \
  GS_EXPORT CUresult name params noexcept {                       \
    GS_REAL(name, params);                                        \
    CUresult r = gs_real_fn args;                                 \
    if (r == CUDA_ERROR_NOT_READY) ::gshare::shim::NoteGpuWait(); \
    return r;                                                     \
  }

extern "C" __attribute__((visibility("default"))) const char gshare_shim_version[] = GSHARE_VERSION;

namespace gs_cuda {
#define GS_HOOK(kind, name, pfn, params, args) GS_HOOK_##kind(name, params, args)
#include "driver/hooks.def"
#undef GS_HOOK
}  // namespace gs_cuda
