// The GATE rows of shim/driver/hooks.def: every submission export, generated from the X-macro and
// implemented once, generically. The op's log kind comes from the export's name; its stream,
// kernel duration and body come from the argument types (see ArgScan and WorkOf below). A copy
// or set checks its device bytes against the VMM mappings (vmm.h) when submitted and again when
// it runs: CUDA_ERROR_ILLEGAL_ADDRESS at once, or the process's sticky error later.
#include <cstring>
#include <string_view>
#include <type_traits>
#include <utility>

#include "driver.h"
#include "fake_cuda_api.h"
#include "graph.h"
#include "vmm.h"

namespace gs_cuda::fake {
namespace {

constexpr char KindOf(std::string_view name) {
  if (name.starts_with("cuLaunchHostFunc")) return 'H';
  if (name.starts_with("cuLaunch")) return 'K';
  if (name.starts_with("cuGraphLaunch")) return 'G';
  if (name.starts_with("cuMemcpy")) return 'C';
  if (name.starts_with("cuMemset")) return 'S';
  return 'O';
}

constexpr bool IsPerThreadName(std::string_view name) {
  return name.ends_with("_ptsz") || name.ends_with("_ptds");
}

// What a submission's arguments say, found by type: the stream (the first CUstream, or the
// launch config's hStream) and the kernel parameters (the first void**, which is kernelParams
// in every launch export that has one).
struct ArgScan {
  bool has_stream = false;
  CUstream stream = nullptr;
  bool bad_config = false;
  bool has_params = false;
  void** params = nullptr;

  void Add(CUstream s) {
    if (!has_stream) {
      has_stream = true;
      stream = s;
    }
  }
  void Add(const CUlaunchConfig* config) {
    if (config == nullptr) {
      bad_config = true;
    } else {
      Add(config->hStream);
    }
  }
  void Add(void** p) {
    if (!has_params) {
      has_params = true;
      params = p;
    }
  }
  template <class T>
  void Add(const T&) {}
};

inline void* Ptr(CUdeviceptr_v2 p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }
inline void* Ptr(void* p) { return p; }
inline const void* Ptr(const void* p) { return p; }

template <class T>
constexpr bool kIsCopyDst = std::is_same_v<T, CUdeviceptr_v2> || std::is_same_v<T, void*>;
template <class T>
constexpr bool kIsCopySrc = std::is_same_v<T, CUdeviceptr_v2> || std::is_same_v<T, const void*>;
template <class T>
constexpr bool kIsFill = std::is_same_v<T, unsigned char> || std::is_same_v<T, unsigned short> ||
                         std::is_same_v<T, unsigned int>;

// What an op does: the memory it touches (checked against the VMM mappings) and the function
// that touches it.
struct Work {
  MemRange ranges[2];
  size_t count = 0;
  std::function<void()> touch;
};

inline MemRange RangeOf(const void* p, size_t n, bool write) {
  return MemRange{reinterpret_cast<uintptr_t>(p), n, write};
}

// The work of an op, chosen by the leading argument types, which are unique to each shape
// among the GATE rows:
//   (dst, src, size_t ...)          with 64-bit pointers: cuMemcpy{,HtoD,DtoH,DtoD}[Async]
//   (CUdeviceptr_v2, fill, size_t)  cuMemsetD8/D16/D32[Async]
//   (CUstream, CUhostFn, void*)     cuLaunchHostFunc
// The legacy 32-bit CUdeviceptr_v1 rows and the 2D/3D/array/batch/peer ones do nothing, and
// kernels touch no memory. Every pointer of a copy is checked, host ones too: a host pointer
// into reserved address space is as unmapped as a device one.
template <class A0, class A1, class A2, class... Rest>
Work WorkOf3(char kind, A0 a0, A1 a1, A2 a2, Rest...) {
  Work w;
  if constexpr (kIsCopyDst<A0> && kIsCopySrc<A1> && std::is_same_v<A2, size_t>) {
    if (kind == 'C') {
      w.ranges[0] = RangeOf(Ptr(a0), a2, true);
      w.ranges[1] = RangeOf(Ptr(a1), a2, false);
      w.count = 2;
      w.touch = [d = Ptr(a0), s = Ptr(a1), n = a2] { std::memmove(d, s, n); };
    }
  } else if constexpr (std::is_same_v<A0, CUdeviceptr_v2> && kIsFill<A1> &&
                       std::is_same_v<A2, size_t>) {
    if (kind == 'S') {
      w.ranges[0] = RangeOf(Ptr(a0), a2 * sizeof(A1), true);
      w.count = 1;
      w.touch = [d = static_cast<A1*>(Ptr(a0)), v = a1, n = a2] {
        for (size_t i = 0; i < n; ++i) d[i] = v;
      };
    }
  } else if constexpr (std::is_same_v<A0, CUstream> && std::is_same_v<A1, CUhostFn> &&
                       std::is_same_v<A2, void*>) {
    if (kind == 'H' && a1 != nullptr) w.touch = [fn = a1, data = a2] { fn(data); };
  }
  return w;
}

template <class... A>
Work WorkOf(char kind, A... a) {
  if constexpr (sizeof...(A) >= 3) {
    return WorkOf3(kind, a...);
  } else {
    return {};
  }
}

// The op body of w. A copy whose memory went away between submission and execution touches
// nothing and leaves the sticky error, as a fault on a GPU does.
std::function<void()> BodyOf(Work w) {
  if (w.count == 0) return std::move(w.touch);
  return [w = std::move(w)] {
    if (AccessRanges(w.ranges, w.count, w.touch) != CUDA_SUCCESS) {
      SetStickyError(CUDA_ERROR_ILLEGAL_ADDRESS);
    }
  };
}

// The graph a cuGraphLaunch row names (its first argument), or nullptr for other rows.
template <class A0, class... Rest>
CUgraphExec GraphOf(A0 a0, Rest...) {
  if constexpr (std::is_same_v<A0, CUgraphExec>) {
    return a0;
  } else {
    return nullptr;
  }
}

// One submission: resolve the stream, build the op, queue it (or record it while the stream
// captures). Exports without a stream argument are synchronous: they run on the default stream
// and return once the op ran.
template <class... A>
CUresult Gate(const char* name, char kind, bool per_thread, A... a) {
  Context* ctx;
  if (CUresult r = CheckContext(&ctx)) return r;
  if (CUresult r = StickyError()) return r;
  ArgScan scan;
  (scan.Add(a), ...);
  if (scan.bad_config) return CUDA_ERROR_INVALID_VALUE;
  Stream* stream;
  if (CUresult r = ResolveStream(scan.stream, per_thread, &stream)) return r;
  Op op;
  if (kind == 'G') {
    CUgraphExec exec = GraphOf(a...);
    if (!IsHandle(exec, HandleKind::kGraphExec)) return CUDA_ERROR_INVALID_HANDLE;
    op = MakeGraphLaunchOp(reinterpret_cast<const GraphExec*>(exec), name);
  } else {
    op.kind = kind;
    op.name = name;
    Work work = WorkOf(kind, a...);
    if (work.count > 0) {
      if (CUresult r = AccessRanges(work.ranges, work.count, {})) return r;
    }
    op.body = BodyOf(std::move(work));
    if (kind == 'K') {
      // Read now, not on the worker: like CUDA, the caller may reuse kernelParams at once.
      op.ms = (scan.params != nullptr && scan.params[0] != nullptr)
                  ? *static_cast<const unsigned int*>(scan.params[0])
                  : GetSettings().kernel_ms;
    }
  }
  const bool sync = !scan.has_stream;
  uint64_t ticket;
  if (CUresult r = stream->Submit(std::move(op), sync ? Stream::Mode::kSync : Stream::Mode::kAsync,
                                  &ticket)) {
    return r;
  }
  if (!sync) return CUDA_SUCCESS;
  stream->WaitFor(ticket);
  return StickyError();
}

}  // namespace
}  // namespace gs_cuda::fake

namespace gs_cuda {
extern "C" {

#define FAKE_UNPACK(...) __VA_ARGS__
#define GS_HOOK(kind, name, pfn, params, args) FAKE_GATE_##kind(name, params, args)
#define FAKE_GATE_GATE(name, params, args)                                                         \
  CUresult name params noexcept {                                                                  \
    return fake::Gate(#name, fake::KindOf(#name), fake::IsPerThreadName(#name), FAKE_UNPACK args); \
  }
// The other kinds have hand-written definitions (memory_exports.cc, graph_exports.cc,
// device_exports.cc, proc_address.cc, vmm.cc). A new kind in hooks.def fails to compile here until
// it gets one.
#define FAKE_GATE_PROCADDR(name, params, args)
#define FAKE_GATE_ALLOC(name, params, args)
#define FAKE_GATE_ALLOCPITCH(name, params, args)
#define FAKE_GATE_ALLOCMANAGED(name, params, args)
#define FAKE_GATE_FREE(name, params, args)
#define FAKE_GATE_ALLOCASYNC(name, params, args)
#define FAKE_GATE_ALLOCPOOL(name, params, args)
#define FAKE_GATE_FREEASYNC(name, params, args)
#define FAKE_GATE_MEMCREATE(name, params, args)
#define FAKE_GATE_MEMRELEASE(name, params, args)
#define FAKE_GATE_MEMMAP(name, params, args)
#define FAKE_GATE_MEMUNMAP(name, params, args)
#define FAKE_GATE_MEMSETACCESS(name, params, args)
#define FAKE_GATE_MEMGETACCESS(name, params, args)
#define FAKE_GATE_MEMRETAIN(name, params, args)
#define FAKE_GATE_MEMPROPS(name, params, args)
#define FAKE_GATE_MEMEXPORT(name, params, args)
#define FAKE_GATE_IPCEXPORT(name, params, args)
#define FAKE_GATE_IPCOPEN(name, params, args)
#define FAKE_GATE_IPCCLOSE(name, params, args)
#define FAKE_GATE_DRIVERALLOC(name, params, args)
#define FAKE_GATE_CAPTURE_BEGIN(name, params, args)
#define FAKE_GATE_CAPTURE_END(name, params, args)
#define FAKE_GATE_CTXDESTROY(name, params, args)
#define FAKE_GATE_INIT(name, params, args)
#define FAKE_GATE_MEMINFO(name, params, args)
#define FAKE_GATE_TOTALMEM(name, params, args)
#define FAKE_GATE_ADDRRANGE(name, params, args)
#define FAKE_GATE_SYNC(name, params, args)
#define FAKE_GATE_QUERY(name, params, args)
#include "driver/hooks.def"
#undef GS_HOOK

}  // extern "C"
}  // namespace gs_cuda
