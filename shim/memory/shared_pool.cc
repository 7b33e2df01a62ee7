// The shared pool's header and its first fit (shared_pool.h).
#include "memory/shared_pool.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gshare::shim {

namespace {
constexpr uint32_t kHeaderEmpty = 0, kHeaderIniting = 1, kHeaderReady = 2;
constexpr uint32_t kLayoutVersion = 1;
constexpr uint8_t kBlockEmpty = 0, kBlockPopulating = 1, kBlockReady = 2;

// Field 22 of /proc/<pid>/stat (starttime), or 0 when the process does not exist.
uint64_t StartTicks(int32_t pid) {
  char path[64];
  if (pid == 0) {
    std::snprintf(path, sizeof path, "/proc/self/stat");
  } else {
    std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  }
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[1024];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
  char* p = std::strrchr(buf, ')');
  if (p == nullptr) return 0;
  char* save = nullptr;
  int field = 2;  // the first token after ')' is field 3
  for (char* tok = strtok_r(p + 1, " ", &save); tok != nullptr;
       tok = strtok_r(nullptr, " ", &save)) {
    if (++field == 22) return std::strtoull(tok, nullptr, 10);
  }
  return 0;
}

bool AliveByProc(int32_t pid, uint64_t start) { return StartTicks(pid) == start; }

uint64_t PidNamespace() {
  struct stat st;
  return stat("/proc/self/ns/pid", &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}
}  // namespace

struct SharedPool::Header {
  std::atomic<uint32_t> state;
  uint32_t version;
  uint64_t blocks;
  pthread_mutex_t mu;  // robust, process-shared
  struct Slot {
    int32_t pid;  // 0: free
    uint32_t reserved;
    uint64_t start;  // StartTicks(pid) when it attached
    uint64_t pidns;
  } slots[kMaxSlots];
  uint8_t block_state[kMaxBlocks];
  uint8_t block_slot[kMaxBlocks];              // the slot populating it (kBlockPopulating)
  uint8_t owner[kMaxBlocks * kUnitsPerBlock];  // slot + 1; 0: free
};
static_assert(std::atomic<uint32_t>::is_always_lock_free);

bool SharedPool::Attach(int fd) {
  static_assert(sizeof(Header) <= kHeaderBytes);
  if (hdr_ != nullptr) return true;
  struct stat st;
  if (fstat(fd, &st) != 0) return false;
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size <= kHeaderBytes || (size - kHeaderBytes) % kBlockBytes != 0 ||
      (size - kHeaderBytes) / kBlockBytes > static_cast<uint64_t>(kMaxBlocks)) {
    return false;
  }
  void* m = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) return false;
  auto* h = static_cast<Header*>(m);
  const int blocks = static_cast<int>((size - kHeaderBytes) / kBlockBytes);
  uint32_t expected = kHeaderEmpty;
  if (h->state.compare_exchange_strong(expected, kHeaderIniting)) {
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&h->mu, &a);
    pthread_mutexattr_destroy(&a);
    h->version = kLayoutVersion;
    h->blocks = static_cast<uint64_t>(blocks);
    h->state.store(kHeaderReady, std::memory_order_release);
  }
  for (int i = 0; i < 1000 && h->state.load(std::memory_order_acquire) != kHeaderReady; ++i) {
    timespec ms{0, 1000000};
    nanosleep(&ms, nullptr);
  }
  if (h->state.load(std::memory_order_acquire) != kHeaderReady || h->version != kLayoutVersion ||
      h->blocks != static_cast<uint64_t>(blocks)) {
    munmap(m, size);
    return false;
  }
  hdr_ = h;
  base_ = static_cast<char*>(m);
  mapped_ = size;
  blocks_ = blocks;
  pidns_ = PidNamespace();
  const int32_t pid = static_cast<int32_t>(getpid());
  const uint64_t start = StartTicks(0);
  int slot = -1;
  if (Lock()) {
    for (int s = 0; s < kMaxSlots && slot < 0; ++s) {
      if (hdr_->slots[s].pid != 0 && !SlotAliveLocked(s)) FreeSlotLocked(s);
      if (hdr_->slots[s].pid == 0) slot = s;
    }
    if (slot >= 0) hdr_->slots[slot] = Header::Slot{pid, 0, start, pidns_};
    Unlock();
  }
  if (slot < 0) {
    Unmap();
    return false;
  }
  slot_ = slot;
  return true;
}

void SharedPool::AbandonForTest() { Unmap(); }

void SharedPool::Unmap() {
  if (base_ != nullptr) munmap(base_, mapped_);
  hdr_ = nullptr;
  base_ = nullptr;
  mapped_ = 0;
  blocks_ = 0;
  slot_ = -1;
  owned_units_.store(0, std::memory_order_relaxed);
}

bool SharedPool::Lock() {
  int r = pthread_mutex_lock(&hdr_->mu);
  if (r == EOWNERDEAD) {
    // Its holder died between two writes of the header: at worst some of its own units stay
    // marked, which Reclaim frees once its slot is seen dead.
    pthread_mutex_consistent(&hdr_->mu);
    return true;
  }
  return r == 0;
}

void SharedPool::Unlock() { pthread_mutex_unlock(&hdr_->mu); }

int SharedPool::BlockOf(const void* p) const {
  const char* c = static_cast<const char*>(p);
  if (base_ == nullptr || c < base_ + kHeaderBytes || c >= base_ + mapped_) return -1;
  return static_cast<int>(static_cast<uint64_t>(c - base_ - kHeaderBytes) / kBlockBytes);
}

bool SharedPool::Ready(int b) const {
  return hdr_ != nullptr && b >= 0 && b < blocks_ &&
         __atomic_load_n(&hdr_->block_state[b], __ATOMIC_ACQUIRE) == kBlockReady;
}

void* SharedPool::Take(uint64_t units, const bool* usable, int* block) {
  if (hdr_ == nullptr || units == 0 || units > static_cast<uint64_t>(kUnitsPerBlock)) {
    return nullptr;
  }
  if (!Lock()) return nullptr;
  const uint8_t me = static_cast<uint8_t>(slot_ + 1);
  void* found = nullptr;
  for (int b = 0; b < blocks_ && found == nullptr; ++b) {
    if (hdr_->block_state[b] != kBlockReady || (usable != nullptr && !usable[b])) continue;
    uint8_t* owner = hdr_->owner + static_cast<uint64_t>(b) * kUnitsPerBlock;
    uint64_t run = 0;
    for (int i = 0; i < kUnitsPerBlock; ++i) {
      run = owner[i] != 0 ? 0 : run + 1;
      if (run == units) {
        const int from = i + 1 - static_cast<int>(run);
        std::memset(owner + from, me, units);
        found = Block(b) + static_cast<uint64_t>(from) * kUnitBytes;
        *block = b;
        break;
      }
    }
  }
  Unlock();
  if (found != nullptr) owned_units_.fetch_add(units, std::memory_order_relaxed);
  return found;
}

void SharedPool::Give(void* p, uint64_t units) {
  const int b = BlockOf(p);
  if (b < 0 || !Lock()) return;
  const uint64_t first =
      static_cast<uint64_t>(static_cast<char*>(p) - base_ - kHeaderBytes) / kUnitBytes;
  const uint8_t me = static_cast<uint8_t>(slot_ + 1);
  uint64_t freed = 0;
  for (uint64_t u = first; u < first + units && u < static_cast<uint64_t>(blocks_) * kUnitsPerBlock;
       ++u) {
    if (hdr_->owner[u] == me) {
      hdr_->owner[u] = 0;
      ++freed;
    }
  }
  Unlock();
  owned_units_.fetch_sub(freed, std::memory_order_relaxed);
}

int SharedPool::ClaimEmpty() {
  if (hdr_ == nullptr || !Lock()) return -1;
  int claimed = -1;
  for (int b = 0; b < blocks_ && claimed < 0; ++b) {
    if (hdr_->block_state[b] == kBlockEmpty) {
      hdr_->block_slot[b] = static_cast<uint8_t>(slot_);
      __atomic_store_n(&hdr_->block_state[b], kBlockPopulating, __ATOMIC_RELEASE);
      claimed = b;
    }
  }
  Unlock();
  return claimed;
}

void SharedPool::Finish(int block, bool ready) {
  if (hdr_ == nullptr || block < 0 || block >= blocks_ || !Lock()) return;
  if (hdr_->block_state[block] == kBlockPopulating && hdr_->block_slot[block] == slot_) {
    __atomic_store_n(&hdr_->block_state[block], ready ? kBlockReady : kBlockEmpty,
                     __ATOMIC_RELEASE);
  }
  Unlock();
}

bool SharedPool::SlotAliveLocked(int slot) const {
  const Header::Slot& s = hdr_->slots[slot];
  if (s.pid == 0) return false;
  if (s.pidns != pidns_) return true;  // another pid namespace: its pids mean nothing here
  return (alive_ != nullptr ? alive_ : AliveByProc)(s.pid, s.start);
}

int SharedPool::FreeSlotLocked(int slot) {
  const uint8_t id = static_cast<uint8_t>(slot + 1);
  int freed = 0;
  const uint64_t units = static_cast<uint64_t>(blocks_) * kUnitsPerBlock;
  for (uint64_t u = 0; u < units; ++u) {
    if (hdr_->owner[u] == id) {
      hdr_->owner[u] = 0;
      ++freed;
    }
  }
  // A block it was populating is usable as it is: pinning faults in what it did not touch.
  for (int b = 0; b < blocks_; ++b) {
    if (hdr_->block_state[b] == kBlockPopulating && hdr_->block_slot[b] == slot) {
      __atomic_store_n(&hdr_->block_state[b], kBlockReady, __ATOMIC_RELEASE);
    }
  }
  hdr_->slots[slot] = Header::Slot{};
  return freed;
}

int SharedPool::Reclaim() {
  if (hdr_ == nullptr || !Lock()) return 0;
  int freed = 0;
  for (int s = 0; s < kMaxSlots; ++s) {
    if (s != slot_ && hdr_->slots[s].pid != 0 && !SlotAliveLocked(s)) freed += FreeSlotLocked(s);
  }
  Unlock();
  return freed;
}

uint64_t SharedPool::ReadyBytes() {
  uint64_t n = 0;
  for (int b = 0; b < blocks_; ++b) n += Ready(b) ? kBlockBytes : 0;
  return n;
}

int SharedPool::FreeUnitsLocked(int b) const {
  const uint8_t* owner = hdr_->owner + static_cast<uint64_t>(b) * kUnitsPerBlock;
  int n = 0;
  for (int i = 0; i < kUnitsPerBlock; ++i) n += owner[i] == 0 ? 1 : 0;
  return n;
}

uint64_t SharedPool::FreeBytesIn(const bool* usable) {
  if (hdr_ == nullptr || !Lock()) return 0;
  uint64_t free_units = 0;
  for (int b = 0; b < blocks_; ++b) {
    if (hdr_->block_state[b] != kBlockReady || (usable != nullptr && !usable[b])) continue;
    free_units += FreeUnitsLocked(b);
  }
  Unlock();
  return free_units * kUnitBytes;
}

int SharedPool::ReadyWithRoom(const bool* skip) {
  if (hdr_ == nullptr || !Lock()) return -1;
  int found = -1;
  for (int b = 0; b < blocks_ && found < 0; ++b) {
    if (hdr_->block_state[b] == kBlockReady && !skip[b] && FreeUnitsLocked(b) > 0) found = b;
  }
  Unlock();
  return found;
}

}  // namespace gshare::shim
