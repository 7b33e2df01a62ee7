// SharedPool (shim/memory/shared_pool.h): one user's processes dividing a host pool's units —
// disjoint extents, ready blocks only, the pinned-here mask, the block with room to pin ahead,
// a gone process's units and claims reclaimed (by the /proc check, with a real child that
// exits), and files it refuses.
#include "memory/shared_pool.h"

#include <doctest/doctest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

namespace gshare::shim::unit_shared_pool {
namespace {

constexpr uint64_t kUnit = SharedPool::kUnitBytes;

// A pool file of `blocks` blocks, as the daemon makes it (memory is only reserved).
int PoolFile(int blocks) {
  int fd = memfd_create("unit-pool", MFD_CLOEXEC);
  REQUIRE(fd >= 0);
  REQUIRE(ftruncate(
              fd, static_cast<off_t>(SharedPool::kHeaderBytes + static_cast<uint64_t>(blocks) *
                                                                    SharedPool::kBlockBytes)) == 0);
  return fd;
}

// Brings block `b` to ready the way a process does after populating it.
void MakeReady(SharedPool& pool, int expected) {
  const int b = pool.ClaimEmpty();
  REQUIRE(b == expected);
  CHECK(!pool.Ready(b));
  pool.Finish(b, /*ready=*/true);
  CHECK(pool.Ready(b));
}

bool Dead(int32_t, uint64_t) { return false; }

TEST_CASE("two processes' extents in one shared pool never overlap, and come back") {
  const int fd = PoolFile(2);
  SharedPool a, b;
  REQUIRE(a.Attach(fd));
  REQUIRE(b.Attach(fd));
  CHECK(a.blocks() == 2);
  int block = -1;
  CHECK(a.Take(1, nullptr, &block) == nullptr);  // nothing ready yet
  MakeReady(a, 0);
  CHECK(b.Ready(0));  // populated once, usable by both

  void* x = a.Take(300, nullptr, &block);
  REQUIRE(x != nullptr);
  CHECK(block == 0);
  CHECK(x == a.Block(0));
  void* y = b.Take(200, nullptr, &block);
  REQUIRE(y != nullptr);
  CHECK(static_cast<char*>(y) - b.Block(0) == static_cast<ptrdiff_t>(300 * kUnit));
  // 12 units left in block 0: a larger extent does not fit until another block is ready.
  CHECK(b.Take(13, nullptr, &block) == nullptr);
  CHECK(a.OwnedBytes() == 300 * kUnit);
  CHECK(b.OwnedBytes() == 200 * kUnit);
  bool usable[SharedPool::kMaxBlocks] = {};
  usable[0] = true;
  CHECK(a.FreeBytesIn(usable) == 12 * kUnit);

  // One process cannot free the other's units (the same units at its own mapping's address:
  // each process maps the pool where its kernel put it).
  b.Give(b.Block(0) + (static_cast<char*>(x) - a.Block(0)), 300);
  CHECK(b.OwnedBytes() == 200 * kUnit);
  CHECK(a.OwnedBytes() == 300 * kUnit);
  CHECK(b.Take(13, nullptr, &block) == nullptr);
  a.Give(x, 300);
  CHECK(a.OwnedBytes() == 0);
  void* z = b.Take(13, nullptr, &block);
  CHECK(z == b.Block(0));  // first fit reuses what `a` gave back
  CHECK(a.ReadyBytes() == SharedPool::kBlockBytes);
  close(fd);
}

TEST_CASE("a shared pool takes extents only in blocks the caller marks usable") {
  const int fd = PoolFile(3);
  SharedPool p;
  REQUIRE(p.Attach(fd));
  MakeReady(p, 0);
  MakeReady(p, 1);
  bool usable[SharedPool::kMaxBlocks] = {};
  usable[1] = true;
  int block = -1;
  REQUIRE(p.Take(SharedPool::kUnitsPerBlock, usable, &block) != nullptr);
  CHECK(block == 1);
  CHECK(p.Take(1, usable, &block) == nullptr);  // block 1 full, block 0 not usable here
  CHECK(p.Take(1, nullptr, &block) != nullptr);
  CHECK(block == 0);
  // A block given up unpopulated is empty again; the third is claimed next.
  const int c = p.ClaimEmpty();
  CHECK(c == 2);
  CHECK(p.ClaimEmpty() == -1);
  p.Finish(c, /*ready=*/false);
  CHECK(p.ClaimEmpty() == 2);
  close(fd);
}

TEST_CASE("the ready block with room for a process that pins ahead skips full and pinned ones") {
  // A process pinning its pool ahead pins another's block only for its free units: one full of
  // the other's units gives it no room (HostPool::AddSharedBlock).
  const int fd = PoolFile(4);
  SharedPool other, self;
  REQUIRE(other.Attach(fd));
  REQUIRE(self.Attach(fd));
  bool pinned[SharedPool::kMaxBlocks] = {};
  CHECK(self.ReadyWithRoom(pinned) == -1);  // nothing ready
  MakeReady(other, 0);
  MakeReady(other, 1);
  MakeReady(other, 2);
  int block = -1;
  REQUIRE(other.Take(SharedPool::kUnitsPerBlock, nullptr, &block) != nullptr);
  CHECK(block == 0);
  REQUIRE(other.Take(SharedPool::kUnitsPerBlock - 1, nullptr, &block) != nullptr);
  CHECK(block == 1);
  CHECK(self.ReadyWithRoom(pinned) == 1);  // block 0 is full; block 1 has one unit left
  pinned[1] = true;
  CHECK(self.ReadyWithRoom(pinned) == 2);
  pinned[2] = true;
  CHECK(self.ReadyWithRoom(pinned) == -1);  // block 3 is not ready
  other.Give(other.Block(0), SharedPool::kUnitsPerBlock);
  CHECK(self.ReadyWithRoom(pinned) == 0);  // given back: room again
  close(fd);
}

TEST_CASE("a shared pool frees the units and claims of a process that is gone") {
  const int fd = PoolFile(2);
  SharedPool live, gone;
  REQUIRE(live.Attach(fd));
  REQUIRE(gone.Attach(fd));
  MakeReady(live, 0);
  int block = -1;
  REQUIRE(gone.Take(SharedPool::kUnitsPerBlock, nullptr, &block) != nullptr);
  CHECK(gone.ClaimEmpty() == 1);  // and dies while populating block 1
  CHECK(live.Take(1, nullptr, &block) == nullptr);
  CHECK(live.Reclaim() == 0);  // it still runs
  live.SetAliveForTest(Dead);
  CHECK(live.Reclaim() == SharedPool::kUnitsPerBlock);
  CHECK(live.Ready(1));  // its block counts as populated: pinning faults in the rest
  CHECK(live.Take(SharedPool::kUnitsPerBlock, nullptr, &block) != nullptr);
  CHECK(live.Take(SharedPool::kUnitsPerBlock, nullptr, &block) != nullptr);
  close(fd);
}

TEST_CASE("a child process's extents come back to the pool after it exits") {
  const int fd = PoolFile(1);
  SharedPool parent;
  REQUIRE(parent.Attach(fd));
  MakeReady(parent, 0);
  int pipefd[2];
  REQUIRE(pipe(pipefd) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    SharedPool mine;  // a process of its own attaches as the shim does
    int block = -1;
    char ok = mine.Attach(fd) && mine.Take(SharedPool::kUnitsPerBlock, nullptr, &block) != nullptr;
    (void)!write(pipefd[1], &ok, 1);
    _exit(0);
  }
  char ok = 0;
  REQUIRE(read(pipefd[0], &ok, 1) == 1);
  CHECK(ok == 1);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  int block = -1;
  CHECK(parent.Take(1, nullptr, &block) == nullptr);  // the child's units, until reclaimed
  CHECK(parent.Reclaim() == SharedPool::kUnitsPerBlock);
  CHECK(parent.Take(1, nullptr, &block) != nullptr);
  close(pipefd[0]);
  close(pipefd[1]);
  close(fd);
}

TEST_CASE("a shared pool refuses a file of the wrong size and a full slot table") {
  int bad = memfd_create("unit-pool", MFD_CLOEXEC);
  REQUIRE(ftruncate(bad, static_cast<off_t>(SharedPool::kHeaderBytes + kUnit)) == 0);
  SharedPool p;
  CHECK(!p.Attach(bad));
  CHECK(!p.attached());
  close(bad);

  const int fd = PoolFile(1);
  static SharedPool slots[SharedPool::kMaxSlots + 1];
  for (int i = 0; i < SharedPool::kMaxSlots; ++i) REQUIRE(slots[i].Attach(fd));
  CHECK(!slots[SharedPool::kMaxSlots].Attach(fd));  // every slot held by a live process
  slots[0].SetAliveForTest(Dead);
  slots[SharedPool::kMaxSlots].SetAliveForTest(Dead);
  CHECK(slots[SharedPool::kMaxSlots].Attach(fd));  // the gone ones' slots are free again
  for (SharedPool& s : slots) s.AbandonForTest();
  close(fd);
}

}  // namespace
}  // namespace gshare::shim::unit_shared_pool
