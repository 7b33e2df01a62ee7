// SharedPool: a host pool that the processes of one user's jobs share, and the division of its
// 2 MiB units among them. The memory is a memfd the daemon creates per user and hands to each
// process that asks (kHostPoolQuery, protocol.h); every process maps all of it. So the pinned
// host memory of several jobs that take turns on a GPU is what they have swapped out at one
// time, not the sum of the most each ever had out (docs/memory.md, "Pinned host pool").
//
// Layout of the file: a header of kHeaderBytes, then blocks of kBlockBytes. The header holds a
// robust process-shared mutex, one slot per attached process (pid, start time, pid namespace),
// the state of each block (empty, being populated by a slot, ready) and the owner of each unit
// (slot + 1; 0: free). Units of a process that is gone (its pid no longer runs the process that
// took the slot) are freed by the next Reclaim. Blocks are populated by whichever process first
// needs them; each process pins (cuMemHostRegister) a block in its own address space once,
// which the caller (HostPool) does: this class makes no driver call.
//
// Any thread of the attached process; the header's mutex serializes processes and threads. It
// is a robust mutex: a process that dies holding it leaves it to the next locker, which marks
// it consistent (the dead process's units are its own to lose). A process in another pid
// namespace cannot be told alive or dead, so its units are never reclaimed.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>

#include "gshare/protocol.h"

namespace gshare::shim {

class SharedPool {
 public:
  static constexpr uint64_t kUnitBytes = 2ull << 20;                   // the VMM granularity
  static constexpr uint64_t kBlockBytes = proto::kHostPoolBlockBytes;  // populated, pinned as one
  static constexpr uint64_t kHeaderBytes = proto::kHostPoolHeaderBytes;
  static constexpr int kUnitsPerBlock = kBlockBytes / kUnitBytes;  // 512
  static constexpr int kMaxBlocks = proto::kHostPoolMaxBlocks;     // 2 TiB
  static constexpr int kMaxSlots = 64;                             // processes at once

  // Whether process `pid`, started at `start` (clock ticks after boot, proc(5) stat field 22),
  // still runs. A seam for tests; the default reads /proc.
  using AliveFn = bool (*)(int32_t pid, uint64_t start);

  // Maps `fd` (a file of kHeaderBytes + n * kBlockBytes, 1 <= n <= kMaxBlocks; the caller
  // keeps or closes it), initializes the header when it is the first, and takes a slot. False
  // (nothing mapped) when the size is wrong, the header is not ready within 1 s, or every slot
  // is taken by a live process.
  bool Attach(int fd);
  bool attached() const { return hdr_ != nullptr; }
  int blocks() const { return blocks_; }
  char* Block(int b) const { return base_ + kHeaderBytes + static_cast<uint64_t>(b) * kBlockBytes; }
  // The block `p` lies in; -1 outside the blocks.
  int BlockOf(const void* p) const;
  bool Ready(int b) const;

  // First fit of `units` contiguous units (1..kUnitsPerBlock) inside one ready block for which
  // `usable[b]` is true (nullptr: any ready block); *block is set to it. nullptr: none fits.
  void* Take(uint64_t units, const bool* usable, int* block);
  // Gives back `units` units at `p` (from Take). Units this process does not own stay as
  // they are.
  void Give(void* p, uint64_t units);
  // Claims an empty block for this process to populate: its index, or -1 when none is empty.
  int ClaimEmpty();
  // The block this process claimed is populated (`ready`), or not (empty again).
  void Finish(int block, bool ready);
  // Frees the units and claims of slots whose process is gone; returns the units freed.
  int Reclaim();

  // This process's units, in bytes (what it has swapped out or staged into the pool).
  uint64_t OwnedBytes() const { return owned_units_.load(std::memory_order_relaxed) * kUnitBytes; }
  // Bytes of ready blocks.
  uint64_t ReadyBytes();
  // Free bytes in ready blocks for which `usable[b]` is true (nullptr: every ready block).
  uint64_t FreeBytesIn(const bool* usable);
  // The first ready block for which `skip[b]` is false and that has a free unit; -1: none.
  int ReadyWithRoom(const bool* skip);

  void SetAliveForTest(AliveFn alive) { alive_ = alive; }
  // Unmaps the pool without freeing anything in it (tests: a process that vanishes).
  void AbandonForTest();

 private:
  struct Header;
  bool Lock();
  void Unlock();
  // Unmaps the pool and forgets it, freeing nothing in it.
  void Unmap();
  // Frees every unit and claim of `slot`. Under the header's mutex.
  int FreeSlotLocked(int slot);
  bool SlotAliveLocked(int slot) const;
  // The free units of block `b`. Under the header's mutex.
  int FreeUnitsLocked(int b) const;

  Header* hdr_ = nullptr;
  char* base_ = nullptr;
  uint64_t mapped_ = 0;
  int blocks_ = 0;
  int slot_ = -1;
  std::atomic<uint64_t> owned_units_{0};
  AliveFn alive_ = nullptr;  // nullptr: /proc
  uint64_t pidns_ = 0;       // this process's pid namespace (its /proc/self/ns/pid inode)
};

}  // namespace gshare::shim
