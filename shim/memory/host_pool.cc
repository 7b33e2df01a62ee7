// First fit over a bitmap of 2 MiB units per pinned block.
#include "memory/host_pool.h"

#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "memory/memory_host.h"
#include "memory/mono_clock.h"
#include "memory/room_wait.h"
#include "memory/vmm_driver.h"
#include "shim_thread.h"

namespace gshare::shim {
namespace {
bool UnitUsed(const uint64_t* bits, int i) { return (bits[i / 64] >> (i % 64)) & 1; }
void SetUnits(uint64_t* bits, int from, int n, bool used) {
  for (int i = from; i < from + n; ++i) {
    if (used) {
      bits[i / 64] |= 1ull << (i % 64);
    } else {
      bits[i / 64] &= ~(1ull << (i % 64));
    }
  }
}
}  // namespace

void* HostPool::TakeLocked(uint64_t units) {
  for (int b = 0; b < count_; ++b) {
    Block& block = blocks_[b];
    int run = 0;
    for (int i = 0; i < kUnitsPerBlock; ++i) {
      run = UnitUsed(block.used, i) ? 0 : run + 1;
      if (run == static_cast<int>(units)) {
        int from = i + 1 - run;
        SetUnits(block.used, from, run, true);
        return block.base + static_cast<uint64_t>(from) * kUnitBytes;
      }
    }
  }
  return nullptr;
}

bool HostPool::AddBlock(bool more) {
  const VmmDriver* vmm = Vmm();
  if (vmm == nullptr) return false;
  mu_.Lock();
  const uint64_t limit = limit_;
  auto fits = [limit](int blocks) {
    return blocks <= kMaxBlocks &&
           (limit == 0 || static_cast<uint64_t>(blocks) * kBlockBytes <= limit);
  };
  bool room = fits(count_ + 1);
  bool room_after = fits(count_ + 2);
  mu_.Unlock();
  if (!room) return false;
  void* p = nullptr;
  if (vmm->cuMemHostRegister_v2 != nullptr) {
    p = spare_ != nullptr ? spare_ : PopulatedBlock();
    spare_ = nullptr;
  }
  if (p != nullptr) {
    // The next block is populated while this one is pinned: populating needs no driver call,
    // so growth runs at the populate rate (~0.07 s/GiB) instead of populate + pin (~0.12).
    pthread_t next;
    bool populating =
        more && room_after &&
        StartShimThread(&next, /*detached=*/false, PopulateSpare, nullptr, "gs-populate") == 0;
    registering_.store(true, std::memory_order_relaxed);
    CUresult r = vmm->cuMemHostRegister_v2(p, kBlockBytes, kHostAllocPortable);
    registering_.store(false, std::memory_order_relaxed);
    if (r != CUDA_SUCCESS) {
      munmap(p, kBlockBytes);
      p = nullptr;
    }
    if (populating) pthread_join(next, &spare_);
  }
  if (p == nullptr) {
    registering_.store(true, std::memory_order_relaxed);
    CUresult r = vmm->cuMemHostAlloc(&p, kBlockBytes, kHostAllocPortable);
    registering_.store(false, std::memory_order_relaxed);
    if (r != CUDA_SUCCESS || p == nullptr) return false;
  }
  mu_.Lock();
  blocks_[count_] = Block{static_cast<char*>(p), {}};
  ++count_;
  mu_.Unlock();
  return true;
}

void* HostPool::PopulateSpare(void*) { return PopulatedBlock(); }

void* HostPool::PopulatedBlock() {
  constexpr uint64_t kAlign = 2ull << 20;  // a huge page
  constexpr uint64_t kMapped = kBlockBytes + kAlign;
  void* m = mmap(nullptr, kMapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  // Keep the 2 MiB-aligned 1 GiB inside; give the slack on both sides back.
  uintptr_t start = reinterpret_cast<uintptr_t>(m);
  uintptr_t aligned = (start + kAlign - 1) & ~(kAlign - 1);
  uintptr_t end = aligned + kBlockBytes;
  if (aligned > start) munmap(m, aligned - start);
  if (start + kMapped > end) munmap(reinterpret_cast<void*>(end), start + kMapped - end);
  char* p = reinterpret_cast<char*>(aligned);
  Populate(p);
  return p;
}

void HostPool::Populate(char* p) {
  madvise(p, kBlockBytes, MADV_HUGEPAGE);  // fewer faults and pages to pin; fine if refused
  // kPopulateThreads threads touch a slice each (this one included).
  pthread_t helpers[kPopulateThreads - 1];
  bool started[kPopulateThreads - 1] = {};
  for (int i = 1; i < kPopulateThreads; ++i) {
    started[i - 1] = StartShimThread(&helpers[i - 1], /*detached=*/false, TouchSlice,
                                     p + i * (kBlockBytes / kPopulateThreads), "gs-touch") == 0;
    if (!started[i - 1]) TouchSlice(p + i * (kBlockBytes / kPopulateThreads));
  }
  TouchSlice(p);
  for (int i = 0; i < kPopulateThreads - 1; ++i) {
    if (started[i]) pthread_join(helpers[i], nullptr);
  }
}

void* HostPool::TouchSlice(void* slice) {
  auto* s = static_cast<volatile char*>(slice);
  for (uint64_t off = 0; off < kBlockBytes / kPopulateThreads; off += 4096) s[off] = 0;
  return nullptr;
}

void* HostPool::Take(uint64_t bytes) {
  uint64_t units = (bytes + kUnitBytes - 1) / kUnitBytes;
  if (units == 0 || units > static_cast<uint64_t>(kUnitsPerBlock)) return nullptr;
  for (;;) {
    if (SharedHere()) return TakeShared(units);
    mu_.Lock();
    void* p = TakeLocked(units);
    int blocks = count_;
    mu_.Unlock();
    if (p != nullptr) return p;
    grow_mu_.Lock();
    MaybeAttach();
    if (SharedHere()) {
      grow_mu_.Unlock();
      continue;
    }
    // Another thread may have grown the pool while this one waited.
    mu_.Lock();
    bool grown = count_ != blocks;
    mu_.Unlock();
    bool ok = grown || AddBlock(/*more=*/true);  // an eviction moves many extents
    grow_mu_.Unlock();
    if (!ok) return nullptr;
  }
}

void* HostPool::TakeWaiting(uint64_t bytes, int64_t stall_ns) {
  void* p = Take(bytes);
  if (p != nullptr || !SharedHere()) return p;
  RoomWait wait(stall_ns, MonoNowNs());
  while (p == nullptr && wait.KeepWaiting(MonoNowNs(), shared_.FreeBytesIn(nullptr))) {
    timespec ms{0, 1'000'000};
    nanosleep(&ms, nullptr);
    p = Take(bytes);
  }
  return p;
}

void* HostPool::TryTake(uint64_t bytes) {
  uint64_t units = (bytes + kUnitBytes - 1) / kUnitBytes;
  if (units == 0 || units > static_cast<uint64_t>(kUnitsPerBlock)) return nullptr;
  MutexLock lock(mu_);
  if (SharedHere()) {
    int block = -1;
    return shared_.Take(units, registered_, &block);  // only blocks pinned here: no driver call
  }
  return TakeLocked(units);
}

void HostPool::Give(void* p, uint64_t bytes) {
  uint64_t units = (bytes + kUnitBytes - 1) / kUnitBytes;
  if (SharedHere() && shared_.BlockOf(p) >= 0) {
    shared_.Give(p, units);
    return;
  }
  char* c = static_cast<char*>(p);
  mu_.Lock();
  for (int b = 0; b < count_; ++b) {
    Block& block = blocks_[b];
    if (c >= block.base && c < block.base + kBlockBytes) {
      SetUnits(block.used, static_cast<int>((c - block.base) / kUnitBytes), static_cast<int>(units),
               false);
      break;
    }
  }
  mu_.Unlock();
}

uint64_t HostPool::Grow(uint64_t bytes) {
  // One block per hold of grow_mu_: an eviction whose Take() finds the pool full waits for
  // the block being added, not for the whole growth, which can take seconds (docs/memory.md,
  // "How `swap` works").
  for (;;) {
    grow_mu_.Lock();
    MaybeAttach();
    uint64_t have = usable();
    bool added =
        have < bytes &&
        (SharedHere() ? AddSharedBlock() : AddBlock(/*more=*/have + 2 * kBlockBytes <= bytes));
    grow_mu_.Unlock();
    if (!added) break;
  }
  return usable();
}

void HostPool::SetLimit(uint64_t bytes) {
  MutexLock lock(mu_);
  limit_ = bytes;
}

uint64_t HostPool::pinned() {
  if (SharedHere()) return shared_.OwnedBytes();
  MutexLock lock(mu_);
  return static_cast<uint64_t>(count_) * kBlockBytes;
}

uint64_t HostPool::usable() {
  if (!SharedHere()) return pinned();
  MutexLock lock(mu_);
  return shared_.OwnedBytes() + shared_.FreeBytesIn(registered_);
}

void HostPool::MaybeAttach() {
  if (shared_tried_) return;
  shared_tried_ = true;
  {
    MutexLock lock(mu_);
    if (count_ != 0) return;  // a pool of its own already: it stays so
  }
  const char* mode = std::getenv("GSHARE_HOST_POOL");
  if (mode != nullptr && std::strcmp(mode, "process") == 0) return;
  if (Vmm() == nullptr || Vmm()->cuMemHostRegister_v2 == nullptr) return;
  const int fd = Host().SharedHostPool();
  if (fd < 0) return;
  const bool ok = shared_.Attach(fd);
  close(fd);  // the mapping keeps the memory
  if (!ok) return;
  shared_pid_ = getpid();
  shared_on_.store(true, std::memory_order_release);
}

void* HostPool::TakeShared(uint64_t units) {
  for (;;) {
    int block = -1;
    void* p = shared_.Take(units, nullptr, &block);
    if (p != nullptr) {
      grow_mu_.Lock();
      const bool pinned_here = RegisterShared(block);
      grow_mu_.Unlock();
      if (pinned_here) return p;
      shared_.Give(p, units);
      return nullptr;
    }
    // No room: extents of processes that are gone come back first, else a new block. (Blocks
    // populated but not pinned here were looked at already: Take considers every one.)
    grow_mu_.Lock();
    const bool more = ReclaimDue() || PopulateSharedBlock();
    grow_mu_.Unlock();
    if (!more) return nullptr;
  }
}

bool HostPool::RegisterShared(int b) {
  {
    MutexLock lock(mu_);
    if (registered_[b]) return true;
  }
  const VmmDriver* vmm = Vmm();
  if (vmm == nullptr || vmm->cuMemHostRegister_v2 == nullptr) return false;
  registering_.store(true, std::memory_order_relaxed);
  CUresult r = vmm->cuMemHostRegister_v2(shared_.Block(b), kBlockBytes, kHostAllocPortable);
  registering_.store(false, std::memory_order_relaxed);
  if (r != CUDA_SUCCESS) return false;
  MutexLock lock(mu_);
  registered_[b] = true;
  return true;
}

void HostPool::PinShared() {
  if (!SharedHere()) return;
  for (int b = 0; b < shared_.blocks(); ++b) {
    if (!shared_.Ready(b)) continue;
    grow_mu_.Lock();
    const bool pinned = RegisterShared(b);  // at once when it is pinned here already
    grow_mu_.Unlock();
    if (!pinned) break;  // the host cannot pin more: the evictions will say so
  }
}

bool HostPool::SharedAtLimit() {
  MutexLock lock(mu_);
  return limit_ != 0 && shared_.OwnedBytes() + kBlockBytes > limit_;
}

bool HostPool::AddSharedBlock() {
  if (SharedAtLimit()) return false;
  // A block another process populated costs this one only its pinning, and gives it room only
  // where it has free units. One full of other processes' units is pinned when an eviction
  // takes units of it (TakeShared), or on the staging thread while idle (PinShared): pinned
  // here, ahead, it would only hold up the job's driver calls (docs/benchmarks.md, "where the
  // notebook case's seconds go").
  int b;
  {
    MutexLock lock(mu_);
    b = shared_.ReadyWithRoom(registered_);
  }
  if (b >= 0) return RegisterShared(b);
  return PopulateSharedBlock();
}

bool HostPool::ReclaimDue() {
  const int64_t now = MonoNowNs();
  if (now - last_reclaim_ns_ < kReclaimEveryNs) return false;
  last_reclaim_ns_ = now;
  return shared_.Reclaim() > 0;
}

bool HostPool::PopulateSharedBlock() {
  if (SharedAtLimit()) return false;
  const int b = shared_.ClaimEmpty();
  if (b < 0) return false;
  Populate(shared_.Block(b));
  const bool ok = RegisterShared(b);
  // Populated either way: another process may still pin it.
  shared_.Finish(b, /*ready=*/true);
  return ok;
}

}  // namespace gshare::shim
