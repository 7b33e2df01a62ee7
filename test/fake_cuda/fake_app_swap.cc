// fake_app --swap-check BYTES --cycles C [--gap-ms G]: a job whose memory a swap engine may
// move to the host and back between its kernels. It allocates buffers through every allocation
// export the engine serves (cuMemAlloc, cuMemAllocPitch, cuMemAllocAsync, cuMemAllocFromPoolAsync)
// in odd sizes, fills each with its own pseudo-random pattern, then runs C cycles of: a kernel
// (gated on the GPU lease under gshare), a bit-exact check of every buffer through the pointer
// it was given at allocation, a new pattern in one buffer (so data changes between swaps), and
// G ms of sleep (so the lease can move). Main thread only.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fake_app.h"

namespace fake_app {
namespace {

// How a buffer was allocated, hence how it is written and freed.
enum class How { kAlloc, kPitch, kAsync, kPool };

struct Buffer {
  How how;
  size_t bytes;      // requested; pitch * height for the pitched one
  CUdeviceptr ptr;   // never changes: the swap engine must keep the address
  uint64_t seed;     // of the pattern the buffer holds now
};

constexpr size_t kMiB = 1u << 20;

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
            std::vector<unsigned char>& got, std::vector<unsigned char>& want) {
  for (size_t k = 0; k < buffers.size(); ++k) {
    const Buffer& b = buffers[k];
    CALL(MemcpyDtoH, got.data(), b.ptr, b.bytes);
    Pattern(b.seed, want.data(), b.bytes);
    if (std::memcmp(got.data(), want.data(), b.bytes) == 0) continue;
    size_t at = 0;
    while (got[at] == want[at]) ++at;
    std::fflush(stdout);
    std::fprintf(stderr, "fake_app: swap-check mismatch cycle=%d buffer=%zu offset=%zu\n", cycle,
                 k, at);
    std::exit(3);
  }
}

// Allocates the mix: small, pitched, stream-ordered, medium, from the default pool, and the
// rest of total in one or two big buffers, interleaved so that the kinds' addresses mix.
std::vector<Buffer> Allocate(const Api& api, CUstream stream, CUdevice dev, size_t total) {
  std::vector<Buffer> out;
  auto alloc = [&](size_t bytes) {
    CUdeviceptr p = 0;
    CALL(MemAlloc, &p, bytes);
    out.push_back(Buffer{How::kAlloc, bytes, p, 0});
  };
  auto alloc_async = [&](size_t bytes) {
    CUdeviceptr p = 0;
    CALL(MemAllocAsync, &p, bytes, stream);
    out.push_back(Buffer{How::kAsync, bytes, p, 0});
  };
  for (size_t bytes : {size_t{300}, size_t{4096}, size_t{100 * 1024}, kMiB + 17}) alloc(bytes);
  CUdeviceptr pitched = 0;
  size_t pitch = 0;
  const size_t width = 1000, height = 37;
  CALL(MemAllocPitch, &pitched, &pitch, width, height, 4);
  if (pitch < width) Fail("swap-check-pitch", static_cast<long>(pitch));
  out.push_back(Buffer{How::kPitch, pitch * height, pitched, 0});
  alloc_async(256 * 1024 + 3);
  alloc(3 * kMiB);
  CUmemoryPool pool = nullptr;
  CALL(DeviceGetDefaultMemPool, &pool, dev);
  CUdeviceptr pooled = 0;
  CALL(MemAllocFromPoolAsync, &pooled, 2 * kMiB + 5, pool, stream);
  out.push_back(Buffer{How::kPool, 2 * kMiB + 5, pooled, 0});
  alloc(20 * kMiB);
  alloc_async(6 * kMiB + 1);
  size_t used = 0;
  for (const Buffer& b : out) used += b.bytes;
  if (total > used) {
    size_t rest = total - used;
    if (rest > 96 * kMiB) {  // two big ones, neither a multiple of anything
      size_t first = rest / 2 + 13;
      alloc(first);
      alloc(rest - first);
    } else {
      alloc(rest);
    }
  }
  return out;
}

}  // namespace

void SwapCheck(const Api& api, const Options& o, CUfunction f, CUdevice dev) {
  CUstream stream = nullptr;
  CALL(StreamCreate, &stream, 0);
  std::vector<Buffer> buffers = Allocate(api, stream, dev, static_cast<size_t>(o.swap_bytes));
  // What the job sees of the GPU once its buffers exist (gshare virtualizes it).
  size_t info_free = 0, info_total = 0;
  CALL(MemGetInfo, &info_free, &info_total);
  std::printf("fake_app: meminfo free=%zu total=%zu\n", info_free, info_total);
  size_t total = 0, biggest = 0;
  for (const Buffer& b : buffers) {
    total += b.bytes;
    biggest = std::max(biggest, b.bytes);
  }
  std::vector<unsigned char> got(biggest), want(biggest);
  for (size_t k = 0; k < buffers.size(); ++k) {
    buffers[k].seed = SeedOf(k, 0);
    Pattern(buffers[k].seed, want.data(), buffers[k].bytes);
    Write(api, stream, buffers[k], want.data());
  }
  for (int cycle = 0; cycle < o.cycles; ++cycle) {
    Launch(api, o, f, stream);
    CALL(StreamSynchronize, stream);
    Verify(api, buffers, cycle, got, want);
    size_t k = static_cast<size_t>(cycle) % buffers.size();
    buffers[k].seed = SeedOf(k, cycle + 1);
    Pattern(buffers[k].seed, want.data(), buffers[k].bytes);
    Write(api, stream, buffers[k], want.data());
    SleepMs(o.gap_ms);
  }
  Verify(api, buffers, o.cycles, got, want);  // the last change too
  for (const Buffer& b : buffers) {
    if (IsStreamOrdered(b)) {
      CALL(MemFreeAsync, b.ptr, stream);
    } else {
      CALL(MemFree, b.ptr);
    }
  }
  CALL(StreamSynchronize, stream);
  CALL(StreamDestroy, stream);
  std::printf("fake_app: swap-check ok cycles=%d bytes=%zu\n", o.cycles, total);
}

}  // namespace fake_app
