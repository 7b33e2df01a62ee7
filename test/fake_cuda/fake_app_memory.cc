// fake_app's memory round trips (fake_app.h): memcpy, a captured graph, a legacy IPC export,
// a VMM mapping unmapped and mapped again, a stream-ordered pool allocation; each checks its
// bytes. Main thread only.
#include <cstdio>
#include <vector>

#include "fake_app.h"

namespace fake_app {

void MemcpyRoundTrip(const Api& api) {
  constexpr size_t kBytes = 4096;
  std::vector<unsigned char> in(kBytes), out(kBytes, 0);
  for (size_t i = 0; i < kBytes; ++i) in[i] = static_cast<unsigned char>(i * 7 + 3);
  CUdeviceptr d = 0;
  CALL(MemAlloc, &d, kBytes);
  CALL(MemcpyHtoD, d, in.data(), kBytes);
  CALL(MemcpyDtoH, out.data(), d, kBytes);
  CALL(MemFree, d);
  if (in != out) Fail("memcpy-mismatch", 0);
}

// Three launches captured into a graph, instantiated and launched twice on a fresh stream.
void CaptureAndReplay(const Api& api, const Options& o, CUfunction f) {
  CUstream stream = nullptr;
  CALL(StreamCreate, &stream, 0);
  CALL(BeginCapture, stream, static_cast<CUstreamCaptureMode>(CU_STREAM_CAPTURE_MODE_GLOBAL));
  for (int i = 0; i < 3; ++i) Launch(api, o, f, stream);
  CUgraph graph = nullptr;
  CALL(EndCapture, stream, &graph);
  CUgraphExec exec = nullptr;
  CALL(GraphInstantiate, &exec, graph, 0);
  CALL(GraphLaunch, exec, stream);
  CALL(GraphLaunch, exec, stream);
  CALL(StreamSynchronize, stream);
  CALL(GraphExecDestroy, exec);
  CALL(GraphDestroy, graph);
  CALL(StreamDestroy, stream);
}

// --ipc-export: a legacy IPC handle of a cuMemAlloc allocation, as PyTorch's tensor sharing and
// vLLM's custom all-reduce take one; the result is printed, not checked.
void IpcExport(const Api& api) {
  CUdeviceptr p = 0;
  CALL(MemAlloc, &p, 1 << 20);
  CUipcMemHandle_v1 handle{};
  CUresult r = Need(api.IpcGetMemHandle, "cuIpcGetMemHandle")(&handle, p);
  std::printf("fake_app: ipc export %d\n", static_cast<int>(r));
  std::fflush(stdout);
  CALL(MemFree, p);
}

unsigned char PatternByte(size_t i) { return static_cast<unsigned char>((i * 131) ^ (i >> 12)); }

// --vmm: reserve a range, back it with a cuMemCreate handle, copy a pattern in, run kernels,
// unmap and remap the same handle at the same address, check the pattern, free everything.
void VmmRoundTrip(const Api& api, const Options& o, CUfunction f, CUdevice dev) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  size_t gran = 0;
  CALL(MemGetGranularity, &gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
  if (gran == 0) Fail("vmm-granularity", 0);
  size_t bytes = (static_cast<size_t>(o.vmm_bytes) + gran - 1) / gran * gran;
  if (bytes == 0) bytes = gran;
  CUdeviceptr base = 0;
  CALL(MemAddressReserve, &base, bytes, 0, 0, 0);
  CUmemGenericAllocationHandle handle = 0;
  CALL(MemCreate, &handle, bytes, &prop, 0);
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CALL(MemMap, base, bytes, 0, handle, 0);
  CALL(MemSetAccess, base, bytes, &access, 1);
  std::vector<unsigned char> in(bytes), out(bytes, 0);
  for (size_t i = 0; i < bytes; ++i) in[i] = PatternByte(i);
  CALL(MemcpyHtoD, base, in.data(), bytes);
  CUstream stream = nullptr;
  CALL(StreamCreate, &stream, 0);
  for (int i = 0; i < 3; ++i) Launch(api, o, f, stream);
  CALL(StreamSynchronize, stream);
  CALL(StreamDestroy, stream);
  CALL(MemUnmap, base, bytes);
  CALL(MemMap, base, bytes, 0, handle, 0);
  CALL(MemSetAccess, base, bytes, &access, 1);
  CALL(MemcpyDtoH, out.data(), base, bytes);
  if (in != out) Fail("vmm-mismatch", 0);
  CALL(MemUnmap, base, bytes);
  CALL(MemRelease, handle);
  CALL(MemAddressFree, base, bytes);
  std::printf("fake_app: vmm ok %zu\n", bytes);
}

// --pool: a stream-ordered allocation, set, read back and freed on one stream.
void PoolRoundTrip(const Api& api, const Options& o) {
  size_t bytes = o.pool_bytes > 0 ? static_cast<size_t>(o.pool_bytes) : 1;
  CUstream stream = nullptr;
  CALL(StreamCreate, &stream, 0);
  CUdeviceptr d = 0;
  CALL(MemAllocAsync, &d, bytes, stream);
  CALL(MemsetD8Async, d, 0x5a, bytes, stream);
  std::vector<unsigned char> out(bytes, 0);
  CALL(MemcpyDtoHAsync, out.data(), d, bytes, stream);
  CALL(MemFreeAsync, d, stream);
  CALL(StreamSynchronize, stream);
  CALL(StreamDestroy, stream);
  for (unsigned char c : out) {
    if (c != 0x5a) Fail("pool-mismatch", 0);
  }
  std::printf("fake_app: pool ok\n");
}

}  // namespace fake_app
