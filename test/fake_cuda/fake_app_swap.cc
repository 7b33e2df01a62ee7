// fake_app --swap-check BYTES --cycles C [--gap-ms G] [--stop-file PATH]: a job whose memory a swap
// engine may move to the host and back between its kernels. It allocates buffers through every
// allocation export the engine serves (cuMemAlloc, cuMemAllocPitch, cuMemAllocAsync,
// cuMemAllocFromPoolAsync) in odd sizes, fills each with its own pseudo-random pattern, then runs C
// cycles of: a kernel (gated on the GPU lease under gshare), a bit-exact check of every buffer
// through the pointer it was given at allocation, a new pattern in one buffer (so data changes
// between swaps), and G ms of sleep (so the lease can move); with --stop-file, cycles go on past C
// until PATH exists. Memory the job maps itself is in the mix too, as PyTorch's expandable segments
// use it: handles mapped one after another into one reservation with access set over the range in
// one call, a segment that is mapped and unmapped again every other cycle (after the sleep, when
// the lease may be elsewhere), a handle released right after mapping (its mapping keeps it alive)
// and one exported as a file descriptor; one cuMemAlloc buffer is exported through legacy IPC. Main
// thread only.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fake_app.h"

namespace fake_app {
namespace {

// How a buffer was allocated, hence how it is written and freed.
enum class How { kAlloc, kPitch, kAsync, kPool, kVmm };

struct Buffer {
  How how;
  size_t bytes;     // requested; pitch * height for the pitched one
  CUdeviceptr ptr;  // never changes: the swap engine must keep the address
  uint64_t seed;    // of the pattern the buffer holds now
  // That pattern, made once per change so that a check is a copy and a compare.
  std::vector<unsigned char> expected;
};

constexpr size_t kMiB = 1u << 20;

// The job's own mappings: a 16 MiB reservation holding a 4 MiB and a 2 MiB handle (and a
// third 2 MiB one every other cycle), a handle released after mapping, an exported one.
struct VmmSet {
  CUdeviceptr segment = 0;
  CUdeviceptr lone = 0;
  CUdeviceptr shared = 0;
  CUmemGenericAllocationHandle seg[3] = {};
  CUmemGenericAllocationHandle exported = 0;
  size_t segment_buffer = 0;  // index of the segment's buffer
  bool grown = false;
};
constexpr size_t kSegmentReserve = 16 * kMiB;
constexpr CUmemAllocationHandleType kFabricHandle = 0x8;  // cuda.h CU_MEM_HANDLE_TYPE_FABRIC

// splitmix64: a cheap, well-mixed 64-bit hash, so patterns of different seeds share nothing.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The pattern of buffer k after change number generation (0: the first fill).
uint64_t SeedOf(size_t k, int generation) {
  return Mix((static_cast<uint64_t>(k) << 32) ^ static_cast<uint64_t>(generation));
}

// The first n bytes of the pattern of seed: word i is Mix(seed + i).
void Pattern(uint64_t seed, unsigned char* out, size_t n) {
  for (size_t at = 0, i = 0; at < n; at += 8, ++i) {
    uint64_t w = Mix(seed + i);
    std::memcpy(out + at, &w, std::min<size_t>(8, n - at));
  }
}

// Gives b the pattern of seed (its first b.bytes bytes) in b.expected.
void SetPattern(Buffer& b, uint64_t seed) {
  b.seed = seed;
  b.expected.resize(b.bytes);
  Pattern(seed, b.expected.data(), b.bytes);
}

bool IsStreamOrdered(const Buffer& b) { return b.how == How::kAsync || b.how == How::kPool; }

// Writes host into b: stream-ordered buffers on their stream, the others synchronously.
void Write(const Api& api, CUstream stream, const Buffer& b, const unsigned char* host) {
  if (IsStreamOrdered(b)) {
    CALL(MemcpyHtoDAsync, b.ptr, host, b.bytes, stream);
    CALL(StreamSynchronize, stream);
  } else {
    CALL(MemcpyHtoD, b.ptr, host, b.bytes);
  }
}

// Reads every buffer back and compares it with its pattern; exits 3 on the first wrong byte.
void Verify(const Api& api, const std::vector<Buffer>& buffers, int cycle,
            std::vector<unsigned char>& got) {
  for (size_t k = 0; k < buffers.size(); ++k) {
    const Buffer& b = buffers[k];
    CALL(MemcpyDtoH, got.data(), b.ptr, b.bytes);
    if (std::memcmp(got.data(), b.expected.data(), b.bytes) == 0) continue;
    size_t at = 0;
    while (got[at] == b.expected[at]) ++at;
    std::fflush(stdout);
    std::fprintf(stderr, "fake_app: swap-check mismatch cycle=%d buffer=%zu offset=%zu\n", cycle, k,
                 at);
    std::exit(3);
  }
}

CUmemAllocationProp DeviceProp(CUdevice dev) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  return prop;
}

CUmemAccessDesc ReadWrite(CUdevice dev) {
  CUmemAccessDesc access{};
  access.location = DeviceProp(dev).location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return access;
}

// Maps a new handle of `bytes` at `at` with read-write access; returns it.
CUmemGenericAllocationHandle MapNew(const Api& api, CUdevice dev, CUdeviceptr at, size_t bytes,
                                    const CUmemAllocationProp& prop) {
  CUmemGenericAllocationHandle h = 0;
  CALL(MemCreate, &h, bytes, &prop, 0);
  CALL(MemMap, at, bytes, 0, h, 0);
  CUmemAccessDesc access = ReadWrite(dev);
  CALL(MemSetAccess, at, bytes, &access, 1);
  return h;
}

// The job's own mappings (VmmSet), with the driver's answers about them checked.
void AllocateVmm(const Api& api, CUdevice dev, VmmSet& v, std::vector<Buffer>& out) {
  CUmemAllocationProp prop = DeviceProp(dev);
  // As PyTorch does: a fabric handle first; the driver refuses it here (the fake has no
  // fabric), and must do so at once even when the memory is not created yet.
  CUmemAllocationProp fabric = prop;
  fabric.requestedHandleTypes = kFabricHandle;
  CUmemGenericAllocationHandle refused = 0;
  if (Need(api.MemCreate, "resolve-MemCreate")(&refused, 4 * kMiB, &fabric, 0) == CUDA_SUCCESS) {
    Fail("swap-check-fabric-accepted", 0);
  }
  CALL(MemAddressReserve, &v.segment, kSegmentReserve, 0, 0, 0);
  CALL(MemCreate, &v.seg[0], 4 * kMiB, &prop, 0);
  CALL(MemCreate, &v.seg[1], 2 * kMiB, &prop, 0);
  CALL(MemMap, v.segment, 4 * kMiB, 0, v.seg[0], 0);
  CALL(MemMap, v.segment + 4 * kMiB, 2 * kMiB, 0, v.seg[1], 0);
  CUmemAccessDesc access = ReadWrite(dev);
  CALL(MemSetAccess, v.segment, 6 * kMiB, &access, 1);
  CUmemGenericAllocationHandle retained = 0;
  CALL(MemRetain, &retained, reinterpret_cast<void*>(v.segment + 5 * kMiB));
  if (retained != v.seg[1]) Fail("swap-check-retain", 0);
  CALL(MemRelease, retained);
  CUmemAllocationProp got{};
  CALL(MemGetProps, &got, v.seg[0]);
  if (got.location.id != dev || got.type != prop.type) Fail("swap-check-props", got.location.id);
  v.segment_buffer = out.size();
  out.push_back(Buffer{How::kVmm, 6 * kMiB, v.segment, 0, {}});
  CALL(MemAddressReserve, &v.lone, 2 * kMiB, 0, 0, 0);
  CUmemGenericAllocationHandle lone = MapNew(api, dev, v.lone, 2 * kMiB, prop);
  CALL(MemRelease, lone);
  out.push_back(Buffer{How::kVmm, 2 * kMiB, v.lone, 0, {}});
  CUmemAllocationProp shareable = prop;
  shareable.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CALL(MemAddressReserve, &v.shared, 2 * kMiB, 0, 0, 0);
  v.exported = MapNew(api, dev, v.shared, 2 * kMiB, shareable);
  int fd = -1;
  CALL(MemExport, &fd, v.exported, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  if (fd < 0) Fail("swap-check-export", fd);
  close(fd);
  out.push_back(Buffer{How::kVmm, 2 * kMiB, v.shared, 0, {}});
}

// Maps a third handle after the segment's two, or unmaps and releases it again: the segment's
// buffer grows to 8 MiB (all of it gets a new pattern) or shrinks back to 6 MiB.
void ToggleGrowth(const Api& api, CUdevice dev, VmmSet& v, Buffer& b, uint64_t seed) {
  CUdeviceptr at = v.segment + 6 * kMiB;
  if (v.grown) {
    CALL(MemUnmap, at, 2 * kMiB);
    CALL(MemRelease, v.seg[2]);
    b.bytes = 6 * kMiB;  // the first 6 MiB of a pattern do not depend on its length
  } else {
    v.seg[2] = MapNew(api, dev, at, 2 * kMiB, DeviceProp(dev));
    CUmemLocation where = DeviceProp(dev).location;
    unsigned long long flags = 0;
    CALL(MemGetAccess, &flags, &where, at);
    if (flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
      Fail("swap-check-access", static_cast<long>(flags));
    b.bytes = 8 * kMiB;
    SetPattern(b, seed);
    CALL(MemcpyHtoD, b.ptr, b.expected.data(), b.bytes);
  }
  v.grown = !v.grown;
}

void FreeVmm(const Api& api, VmmSet& v) {
  size_t mapped = v.grown ? 8 * kMiB : 6 * kMiB;
  CALL(MemUnmap, v.segment, mapped);  // several mappings in one call
  for (int i = 0; i < (v.grown ? 3 : 2); ++i) CALL(MemRelease, v.seg[i]);
  CALL(MemAddressFree, v.segment, kSegmentReserve);
  CALL(MemUnmap, v.lone, 2 * kMiB);  // frees the released handle
  CALL(MemAddressFree, v.lone, 2 * kMiB);
  CALL(MemUnmap, v.shared, 2 * kMiB);
  CALL(MemRelease, v.exported);
  CALL(MemAddressFree, v.shared, 2 * kMiB);
}

// Allocates the mix: small, pitched, stream-ordered, medium, from the default pool, the rest
// of total (less 10 MiB) in `pieces` buffers (one when it is 96 MiB or less), interleaved so that
// the kinds' addresses mix, and the job's own mappings (VmmSet, 10 MiB).
std::vector<Buffer> Allocate(const Api& api, CUstream stream, CUdevice dev, size_t total,
                             int pieces, VmmSet& vmm) {
  std::vector<Buffer> out;
  auto alloc = [&](size_t bytes) {
    CUdeviceptr p = 0;
    CALL(MemAlloc, &p, bytes);
    out.push_back(Buffer{How::kAlloc, bytes, p, 0, {}});
  };
  auto alloc_async = [&](size_t bytes) {
    CUdeviceptr p = 0;
    CALL(MemAllocAsync, &p, bytes, stream);
    out.push_back(Buffer{How::kAsync, bytes, p, 0, {}});
  };
  for (size_t bytes : {size_t{300}, size_t{4096}, size_t{100 * 1024}, kMiB + 17}) alloc(bytes);
  CUdeviceptr pitched = 0;
  size_t pitch = 0;
  const size_t width = 1000, height = 37;
  CALL(MemAllocPitch, &pitched, &pitch, width, height, 4);
  if (pitch < width) Fail("swap-check-pitch", static_cast<long>(pitch));
  out.push_back(Buffer{How::kPitch, pitch * height, pitched, 0, {}});
  alloc_async(256 * 1024 + 3);
  alloc(3 * kMiB);
  // Shared with other processes through legacy IPC, as PyTorch shares a tensor: under the swap
  // engine it stays resident from now on, as fixed memory (a region of 4 MiB). The managed
  // engine refuses (CUDA_ERROR_NOT_SUPPORTED).
  CUipcMemHandle_v1 ipc{};
  CUresult ipc_result = Need(api.IpcGetMemHandle, "cuIpcGetMemHandle")(&ipc, out.back().ptr);
  if (ipc_result != CUDA_SUCCESS && ipc_result != CUDA_ERROR_NOT_SUPPORTED) {
    Fail("swap-check-ipc", ipc_result);
  }
  CUmemoryPool pool = nullptr;
  CALL(DeviceGetDefaultMemPool, &pool, dev);
  CUdeviceptr pooled = 0;
  CALL(MemAllocFromPoolAsync, &pooled, 2 * kMiB + 5, pool, stream);
  out.push_back(Buffer{How::kPool, 2 * kMiB + 5, pooled, 0, {}});
  alloc(20 * kMiB);
  alloc_async(6 * kMiB + 1);
  size_t used = 10 * kMiB;  // the job's own mappings, made last (below)
  for (const Buffer& b : out) used += b.bytes;
  if (total > used) {
    size_t rest = total - used;
    // `pieces` buffers, neither a multiple of anything; one only when the rest is small.
    size_t n = rest > 96 * kMiB ? static_cast<size_t>(pieces) : 1;
    for (size_t i = 0; i < n; ++i) {
      size_t bytes = i + 1 == n ? rest : rest / (n - i) + 13;
      alloc(bytes);
      rest -= bytes;
    }
  }
  // Last, so that their engine regions get the lowest addresses (mmap hands out address space
  // from the top down) and are the first an eviction takes.
  AllocateVmm(api, dev, vmm, out);
  return out;
}

}  // namespace

void SwapCheck(const Api& api, const Options& o, CUfunction f, CUdevice dev) {
  CUstream stream = nullptr;
  CALL(StreamCreate, &stream, 0);
  VmmSet vmm;
  std::vector<Buffer> buffers =
      Allocate(api, stream, dev, static_cast<size_t>(o.swap_bytes), o.pieces, vmm);
  // What the job sees of the GPU once its buffers exist (gshare virtualizes it).
  size_t info_free = 0, info_total = 0;
  CALL(MemGetInfo, &info_free, &info_total);
  std::printf("fake_app: meminfo free=%zu total=%zu\n", info_free, info_total);
  size_t total = 0, biggest = 0;
  for (const Buffer& b : buffers) {
    total += b.bytes;
    biggest = std::max(biggest, b.bytes);
  }
  biggest = std::max(biggest, 8 * kMiB);  // the segment when grown
  std::vector<unsigned char> got(biggest);
  for (size_t k = 0; k < buffers.size(); ++k) {
    SetPattern(buffers[k], SeedOf(k, 0));
    Write(api, stream, buffers[k], buffers[k].expected.data());
  }
  // --stop-file: at least o.cycles, then on until the file exists.
  auto more = [&o](int cycle) {
    return cycle < o.cycles || (!o.stop_file.empty() && access(o.stop_file.c_str(), F_OK) != 0);
  };
  int cycles = 0;  // run so far
  for (; more(cycles); ++cycles) {
    const int cycle = cycles;
    Launch(api, o, f, stream);
    CALL(StreamSynchronize, stream);
    Verify(api, buffers, cycle, got);
    size_t k = static_cast<size_t>(cycle) % buffers.size();
    SetPattern(buffers[k], SeedOf(k, cycle + 1));
    Write(api, stream, buffers[k], buffers[k].expected.data());
    SleepMs(o.gap_ms);
    if (cycle % 2 == 0) {
      ToggleGrowth(api, dev, vmm, buffers[vmm.segment_buffer],
                   SeedOf(vmm.segment_buffer, 1000 + cycle));
    }
  }
  Verify(api, buffers, cycles, got);  // the last change too
  if (o.leak_to_exit) {
    std::printf("fake_app: swap-check ok cycles=%d bytes=%zu\n", cycles, total);
    return;  // the buffers are left to exit (and the driver) to give back
  }
  for (const Buffer& b : buffers) {
    if (b.how == How::kVmm) continue;
    if (IsStreamOrdered(b)) {
      CALL(MemFreeAsync, b.ptr, stream);
    } else {
      CALL(MemFree, b.ptr);
    }
  }
  FreeVmm(api, vmm);
  CALL(StreamSynchronize, stream);
  CALL(StreamDestroy, stream);
  std::printf("fake_app: swap-check ok cycles=%d bytes=%zu\n", cycles, total);
}

}  // namespace fake_app
