// fake_vmm_check, in this process: copies against the VMM mappings (illegal addresses, then the
// sticky error), pinned host memory, events and the memory queries a swap engine uses.
#include <cstdint>
#include <cstring>
#include <vector>

#include "fake_vmm_check.h"

namespace {

constexpr size_t kG = 2u << 20;  // the fake's granularity
constexpr CUresult kIllegal = fake::CUDA_ERROR_ILLEGAL_ADDRESS;

CUmemAllocationProp DeviceProp() {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  return prop;
}

CUmemAccessDesc Access(CUmemAccess_flags flags) {
  CUmemAccessDesc d{};
  d.location = DeviceProp().location;
  d.flags = flags;
  return d;
}

void* Host(CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }
CUdeviceptr Dev(const void* p) { return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p)); }

// A reservation of bytes with one handle of bytes mapped read-write at its start.
int MapOne(size_t bytes, CUdeviceptr* base, CUmemGenericAllocationHandle* h) {
  CUmemAllocationProp prop = DeviceProp();
  CUmemAccessDesc rw = Access(CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  C(cuMemAddressReserve(base, bytes, 0, 0, 0));
  C(cuMemCreate(h, bytes, &prop, 0));
  C(cuMemMap(*base, bytes, 0, *h, 0));
  C(cuMemSetAccess(*base, bytes, &rw, 1));
  return 0;
}

int UnmapOne(size_t bytes, CUdeviceptr base, CUmemGenericAllocationHandle h) {
  C(cuMemUnmap(base, bytes));
  C(cuMemRelease(h));
  C(cuMemAddressFree(base, bytes));
  return 0;
}

}  // namespace

int CheckIllegalAddress() {
  // [base, +g) h1 read-write; [+g, +2g) h2 mapped without access; [+2g, +3g) reserved only.
  CUmemAllocationProp prop = DeviceProp();
  CUmemAccessDesc rw = Access(CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  CUmemAccessDesc ro = Access(CU_MEM_ACCESS_FLAGS_PROT_READ);
  CUdeviceptr base;
  CUmemGenericAllocationHandle h1, h2;
  C(cuMemAddressReserve(&base, 3 * kG, 0, 0, 0));
  C(cuMemCreate(&h1, kG, &prop, 0));
  C(cuMemCreate(&h2, kG, &prop, 0));
  C(cuMemMap(base, kG, 0, h1, 0));
  C(cuMemMap(base + kG, kG, 0, h2, 0));
  C(cuMemSetAccess(base, kG, &rw, 1));
  std::vector<unsigned char> buf(kG, 0x3c);
  CUstream s;
  C(cuStreamCreate(&s, 0));
  C(cuMemcpyHtoD_v2(base, buf.data(), kG));
  E(cuMemcpyHtoD_v2(base + kG, buf.data(), 16), kIllegal);      // mapped, no access
  E(cuMemcpyHtoD_v2(base + 2 * kG, buf.data(), 16), kIllegal);  // not mapped
  E(cuMemcpyDtoH_v2(buf.data(), base + kG - 8, 16), kIllegal);  // straddles into no access
  E(cuMemcpyDtoD_v2(base, base + 2 * kG, 16), kIllegal);
  E(cuMemcpy(base + 2 * kG, Dev(buf.data()), 16), kIllegal);
  E(cuMemcpyDtoH_v2(Host(base + 2 * kG), base, 16), kIllegal);  // a host pointer there too
  E(cuMemsetD8_v2(base + 2 * kG, 1, 1), kIllegal);
  E(cuMemsetD32_v2(base + kG - 4, 1, 2), kIllegal);  // 8 bytes, 4 of them past h1
  C(cuMemsetD32_v2(base + kG - 4, 0x01010101, 1));
  // Asynchronous ones fail when queued.
  E(cuMemcpyHtoDAsync_v2(base + 2 * kG, buf.data(), 16, s), kIllegal);
  E(cuMemcpyDtoHAsync_v2(buf.data(), base + kG, 16, s), kIllegal);
  E(cuMemsetD8Async(base + kG, 0, 16, s), kIllegal);
  // Read-only: reads work, writes do not.
  C(cuMemSetAccess(base + kG, kG, &ro, 1));
  C(cuMemcpyDtoH_v2(buf.data(), base + kG, 16));
  E(cuMemcpyHtoD_v2(base + kG, buf.data(), 16), kIllegal);
  C(cuMemcpyDtoH_v2(buf.data(), base + kG - 8, 16));  // straddles read-write into read-only
  // Unmapped again: illegal; mapped again: the bytes are back.
  C(cuMemUnmap(base, kG));
  E(cuMemcpyDtoH_v2(buf.data(), base, 16), kIllegal);
  C(cuMemMap(base, kG, 0, h1, 0));
  E(cuMemcpyDtoH_v2(buf.data(), base, 16), kIllegal);  // mapped, access not yet set
  C(cuMemSetAccess(base, kG, &rw, 1));
  C(cuMemcpyDtoH_v2(buf.data(), base + kG - 8, 8));
  T(buf[0] == 0x3c && buf[3] == 0x3c && buf[4] == 0x01 && buf[7] == 0x01);
  // Nothing was left behind: no sticky error, and memory outside reservations is unchecked.
  C(cuStreamSynchronize(s));
  C(cuCtxSynchronize());
  std::vector<unsigned char> other(64);
  C(cuMemcpyHtoD_v2(Dev(other.data()), buf.data(), 64));
  C(cuMemUnmap(base, 2 * kG));
  C(cuMemRelease(h1));
  C(cuMemRelease(h2));
  C(cuMemAddressFree(base, 3 * kG));
  C(cuStreamDestroy_v2(s));
  return 0;
}

int CheckHostMemory() {
  const size_t bytes = 3 * (1u << 20) + 5;
  void* h = nullptr;
  void* bad = nullptr;
  C(cuMemHostAlloc(&h, bytes, fake::CU_MEMHOSTALLOC_PORTABLE | fake::CU_MEMHOSTALLOC_DEVICEMAP));
  E(cuMemHostAlloc(&bad, 16, 0x80), CUDA_ERROR_INVALID_VALUE);
  E(cuMemHostAlloc(&bad, 0, 0), CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr hd;
  C(cuMemHostGetDevicePointer_v2(&hd, static_cast<char*>(h) + 100, 0));
  T(hd == Dev(h) + 100);
  int on_stack = 0;
  E(cuMemHostGetDevicePointer_v2(&hd, &on_stack, 0), CUDA_ERROR_INVALID_VALUE);
  // Pinned host -> mapped device -> pinned host, on a stream, ordered by an event.
  CUdeviceptr base;
  CUmemGenericAllocationHandle mh;
  if (MapOne(kG, &base, &mh)) return 1;
  auto* hp = static_cast<unsigned char*>(h);
  for (size_t i = 0; i < kG; ++i) hp[i] = static_cast<unsigned char>(i * 29 + 7);
  CUstream s;
  C(cuStreamCreate(&s, 0));
  C(cuMemcpyHtoDAsync_v2(base, h, kG, s));
  C(cuStreamSynchronize(s));
  std::memset(h, 0, kG);
  CUevent ev;
  C(cuEventCreate(&ev, 0));
  C(cuMemcpyDtoHAsync_v2(h, base, kG, s));
  C(cuEventRecord(ev, s));
  C(cuEventSynchronize(ev));
  C(cuEventQuery(ev));
  for (size_t i = 0; i < kG; i += 4099) T(hp[i] == static_cast<unsigned char>(i * 29 + 7));
  C(cuEventDestroy_v2(ev));
  C(cuMemFreeHost(h));
  E(cuMemFreeHost(h), CUDA_ERROR_INVALID_VALUE);
  E(cuMemFreeHost(&on_stack), CUDA_ERROR_INVALID_VALUE);
  C(cuMemAllocHost_v2(&h, 1000));
  C(cuMemFreeHost(h));
  // cuMemGetAddressRange: an allocation's start and size from any byte of it.
  CUdeviceptr p, rb;
  size_t rs;
  C(cuMemAlloc_v2(&p, 1000));
  C(cuMemGetAddressRange_v2(&rb, &rs, p + 999));
  T(rb == p && rs == 1000);
  E(cuMemGetAddressRange_v2(&rb, &rs, p + 1000), CUDA_ERROR_NOT_FOUND);
  C(cuMemGetAddressRange_v2(&rb, nullptr, base + kG - 1));
  T(rb == base);
  C(cuMemGetAddressRange_v2(nullptr, &rs, base));
  T(rs == kG);
  E(cuMemGetAddressRange_v2(&rb, &rs, Dev(&on_stack)), CUDA_ERROR_NOT_FOUND);
  CUdeviceptr q;
  C(cuMemAllocAsync(&q, 5000, s));
  C(cuMemGetAddressRange_v2(&rb, &rs, q + 4999));
  T(rb == q && rs >= 5000);
  C(cuMemFreeAsync(q, s));
  C(cuStreamSynchronize(s));
  C(cuMemFree_v2(p));
  if (UnmapOne(kG, base, mh)) return 1;
  C(cuStreamDestroy_v2(s));
  // Total memory agrees with cuMemGetInfo; cuGetProcAddress knows the new exports.
  size_t total, f, t;
  C(cuDeviceTotalMem_v2(&total, 0));
  C(cuMemGetInfo_v2(&f, &t));
  T(total == t && f <= t);
  void* fn = nullptr;
  CUdriverProcAddressQueryResult found;
  C(cuGetProcAddress_v2("cuMemHostAlloc", &fn, 12000, 0, &found));
  T(fn == reinterpret_cast<void*>(&cuMemHostAlloc));
  C(cuGetProcAddress_v2("cuMemHostGetDevicePointer", &fn, 12000, 0, &found));
  T(fn == reinterpret_cast<void*>(&cuMemHostGetDevicePointer_v2));
  C(cuGetProcAddress_v2("cuMemGetAddressRange", &fn, 12000, 0, &found));
  T(fn == reinterpret_cast<void*>(&cuMemGetAddressRange_v2));
  return 0;
}

int CheckStickyError() {
  CUmodule mod;
  CUfunction fn;
  C(cuModuleLoadData(&mod, "fake cubin"));
  C(cuModuleGetFunction(&fn, mod, "sleep_kernel"));
  CUdeviceptr base;
  CUmemGenericAllocationHandle h;
  if (MapOne(kG, &base, &h)) return 1;
  CUdeviceptr plain;
  C(cuMemAlloc_v2(&plain, 64));
  CUstream s;
  C(cuStreamCreate(&s, 0));
  unsigned int ms = 200;
  void* params[] = {&ms};
  std::vector<unsigned char> buf(16);
  C(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, s, params, nullptr));
  C(cuMemcpyDtoHAsync_v2(buf.data(), base, 16, s));  // mapped when queued...
  C(cuMemUnmap(base, kG));                           // ...not when it runs
  E(cuStreamSynchronize(s), kIllegal);
  E(cuCtxSynchronize(), kIllegal);
  E(cuMemcpyHtoD_v2(plain, buf.data(), 16), kIllegal);  // sticky: even good memory
  E(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, s, params, nullptr), kIllegal);
  C(cuMemRelease(h));
  C(cuMemAddressFree(base, kG));
  return 0;
}
