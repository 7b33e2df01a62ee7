// fake_vmm_check: direct checks of the fake driver's VMM and pool semantics (linked against
// the fake; ctest fake_vmm_check): granularity, accounting in cuMemGetInfo, bytes kept per handle
// across unmap/remap and distinct per handle, release-while-mapped, retain, error codes, pool
// attributes, release threshold and trim, and a multi-threaded map/unmap stress; then what a
// swap engine needs (fake_vmm_check.h): illegal addresses, pinned host memory, a device shared
// between processes, the failure knobs, the sticky error.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "fake_vmm_check.h"

namespace {

// Each thread maps its own handle into its own reservation, writes, unmaps, remaps, checks.
int StressThread(CUcontext ctx, int id, std::atomic<int>* failures) {
  C(cuCtxSetCurrent(ctx));
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  const size_t g = 2u << 20;
  CUmemAccessDesc d{};
  d.location = prop.location;
  d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  for (int round = 0; round < 20; ++round) {
    CUdeviceptr base;
    CUmemGenericAllocationHandle h;
    C(cuMemAddressReserve(&base, g, 0, 0, 0));
    C(cuMemCreate(&h, g, &prop, 0));
    C(cuMemMap(base, g, 0, h, 0));
    C(cuMemSetAccess(base, g, &d, 1));
    std::memset(reinterpret_cast<void*>(base), id + round, g);
    C(cuMemUnmap(base, g));
    C(cuMemMap(base, g, 0, h, 0));
    C(cuMemSetAccess(base, g, &d, 1));
    auto* p = reinterpret_cast<unsigned char*>(base);
    if (p[0] != static_cast<unsigned char>(id + round) || p[g - 1] != p[0]) ++*failures;
    C(cuMemUnmap(base, g));
    C(cuMemRelease(h));
    C(cuMemAddressFree(base, g));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--child") == 0) return RunChild(argc, argv);
  C(cuInit(0));
  CUcontext ctx;
  C(cuDevicePrimaryCtxRetain(&ctx, 0));
  C(cuCtxSetCurrent(ctx));
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  size_t g;
  C(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  T(g == (2u << 20));
  size_t f0, t;
  C(cuMemGetInfo_v2(&f0, &t));
  CUmemGenericAllocationHandle a, b;
  E(cuMemCreate(&a, g + 1, &prop, 0), CUDA_ERROR_INVALID_VALUE);
  C(cuMemCreate(&a, 2 * g, &prop, 0));
  C(cuMemCreate(&b, 2 * g, &prop, 0));
  size_t f1;
  C(cuMemGetInfo_v2(&f1, &t));
  T(f0 - f1 == 4 * g);  // cuMemCreate bytes count as used
  CUdeviceptr base;
  C(cuMemAddressReserve(&base, 4 * g, 0, 0, 0));
  T(base % g == 0);
  C(cuMemMap(base, 2 * g, 0, a, 0));
  C(cuMemMap(base + 2 * g, 2 * g, 0, b, 0));
  E(cuMemMap(base, 2 * g, 0, b, 0), CUDA_ERROR_INVALID_VALUE);
  CUmemAccessDesc d{};
  d.location = prop.location;
  d.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  C(cuMemSetAccess(base, 4 * g, &d, 1));
  unsigned long long fl;
  C(cuMemGetAccess(&fl, &prop.location, base + 5));
  T(fl == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  std::memset(reinterpret_cast<void*>(base), 0xaa, 2 * g);
  std::memset(reinterpret_cast<void*>(base + 2 * g), 0xbb, 2 * g);
  C(cuMemUnmap(base, 4 * g));
  // swap: map b first, a second
  C(cuMemMap(base, 2 * g, 0, b, 0));
  C(cuMemMap(base + 2 * g, 2 * g, 0, a, 0));
  C(cuMemSetAccess(base, 4 * g, &d, 1));
  std::vector<unsigned char> out(4 * g);
  C(cuMemcpyDtoH_v2(out.data(), base, 4 * g));
  T(out[0] == 0xbb && out[2 * g] == 0xaa);  // each handle kept its own bytes
  CUmemGenericAllocationHandle r;
  C(cuMemRetainAllocationHandle(&r, reinterpret_cast<void*>(base + 2 * g + 9)));
  T(r == a);
  C(cuMemRelease(r));
  C(cuMemRelease(a));  // still mapped: storage stays
  size_t f2;
  C(cuMemGetInfo_v2(&f2, &t));
  T(f2 == f1);
  T(reinterpret_cast<unsigned char*>(base)[2 * g + 5] == 0xaa);  // released while mapped: kept
  E(cuMemAddressFree(base, 4 * g), CUDA_ERROR_INVALID_VALUE);
  C(cuMemUnmap(base + 2 * g, 2 * g));
  C(cuMemGetInfo_v2(&f2, &t));
  T(f2 == f1 + 2 * g);  // a's storage freed with its last mapping
  C(cuMemUnmap(base, 2 * g));
  C(cuMemRelease(b));
  E(cuMemRelease(b), CUDA_ERROR_INVALID_VALUE);
  C(cuMemAddressFree(base, 4 * g));
  C(cuMemGetInfo_v2(&f2, &t));
  T(f2 == f0);
  // export: a file descriptor, only for a handle created to be shared that way
  CUmemAllocationProp shareable = prop;
  shareable.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CUmemGenericAllocationHandle sh, plain;
  C(cuMemCreate(&sh, g, &shareable, 0));
  C(cuMemCreate(&plain, g, &prop, 0));
  int fd = -1;
  C(cuMemExportToShareableHandle(&fd, sh, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  T(fd >= 0);
  close(fd);
  E(cuMemExportToShareableHandle(&fd, plain, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
    CUDA_ERROR_INVALID_VALUE);
  E(cuMemExportToShareableHandle(&fd, sh, 2, 0), CUDA_ERROR_NOT_SUPPORTED);
  C(cuMemRelease(sh));
  C(cuMemRelease(plain));
  // pools
  CUmemoryPool dp;
  C(cuDeviceGetDefaultMemPool(&dp, 0));
  CUstream s;
  C(cuStreamCreate(&s, 0));
  CUdeviceptr p;
  C(cuMemAllocAsync(&p, 1000, s));
  cuuint64_t v;
  C(cuMemPoolGetAttribute(dp, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &v));
  T(v == 1024);
  C(cuMemFreeAsync(p, s));
  C(cuStreamSynchronize(s));
  C(cuMemPoolGetAttribute(dp, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &v));
  T(v == 0);
  C(cuMemPoolGetAttribute(dp, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &v));
  T(v == 0);
  CUmemPoolProps pp{};
  pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  pp.location = prop.location;
  CUmemoryPool mp;
  C(cuMemPoolCreate(&mp, &pp));
  cuuint64_t th = 1 << 20;
  C(cuMemPoolSetAttribute(mp, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &th));
  C(cuMemAllocFromPoolAsync(&p, 4096, mp, s));
  C(cuMemFreeAsync(p, s));
  C(cuStreamSynchronize(s));
  C(cuMemPoolGetAttribute(mp, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &v));
  T(v == 4096);
  C(cuMemGetInfo_v2(&f2, &t));
  T(f0 - f2 == 4096);
  C(cuMemPoolTrimTo(mp, 0));
  C(cuMemPoolGetAttribute(mp, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &v));
  T(v == 0);
  C(cuMemGetInfo_v2(&f2, &t));
  T(f2 == f0);
  C(cuMemPoolDestroy(mp));
  E(cuMemPoolDestroy(dp), CUDA_ERROR_INVALID_VALUE);
  // Stress: threads mapping, unmapping and releasing at once.
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] { errors += StressThread(ctx, i, &failures); });
  }
  for (auto& th : threads) th.join();
  T(errors == 0 && failures == 0);
  C(cuMemGetInfo_v2(&f2, &t));
  T(f2 == f0);
  if (CheckIllegalAddress() || CheckHostMemory() || CheckProcesses(argv[0]) || CheckStickyError()) {
    return 1;
  }
  std::printf("fake_vmm_check: ok\n");
  return 0;
}
