// The swap engine's regions: found by address, what each device's chunks add up to (resident,
// not resident, staged), and which slab has room for one more block.
#include "memory/region_table.h"

#include <doctest/doctest.h>

#include <cstdint>

#include "freed.h"

namespace gshare::shim::unit_region_table {
namespace {

using swap_internal::Chunk;
using swap_internal::kEvicted;
using swap_internal::kFresh;
using swap_internal::kGranule;
using swap_internal::kResident;
using swap_internal::Region;

constexpr uint64_t kMiB = 1ull << 20;

using Table = unit_freed::Freed<RegionTable>;

Region MakeRegion(uint64_t base, uint64_t size, int device, Chunk* chunks, int nchunks) {
  Region r{};
  r.base = base;
  r.size = size;
  r.device = device;
  r.chunks = chunks;
  r.nchunks = nchunks;
  return r;
}

TEST_CASE("RegionTable: Bytes adds up one device's chunks, resident or not") {
  int host = 0;  // a stand-in for a pool extent
  Chunk a[3] = {{0, 64 * kMiB, 1, nullptr, kResident},
                {64 * kMiB, 64 * kMiB, 0, &host, kEvicted},
                {128 * kMiB, 8 * kMiB, 0, nullptr, kFresh}};
  Chunk b[1] = {{0, 32 * kMiB, 1, nullptr, kResident}};
  Chunk c[2] = {{0, 16 * kMiB, 1, nullptr, kResident}, {16 * kMiB, 4 * kMiB, 1, &host, kResident}};
  Region ra = MakeRegion(512 * kMiB, 136 * kMiB, 0, a, 3);
  Region rb = MakeRegion(1024 * kMiB, 32 * kMiB, 1, b, 1);
  Region rc = MakeRegion(64 * kMiB, 20 * kMiB, 0, c, 2);
  Table t;
  REQUIRE(t.Insert(&ra));
  REQUIRE(t.Insert(&rb));
  REQUIRE(t.Insert(&rc));

  CHECK(t.Bytes(0, /*resident=*/true) == (64 + 16 + 4) * kMiB);
  CHECK(t.Bytes(0, /*resident=*/false) == (64 + 8) * kMiB);  // evicted and fresh
  CHECK(t.Bytes(1, /*resident=*/true) == 32 * kMiB);
  CHECK(t.Bytes(1, /*resident=*/false) == 0);
  CHECK(t.Bytes(2, /*resident=*/true) == 0);
  // Staged: resident with a host copy; an evicted chunk's host data is not a staged copy.
  CHECK(t.Staged(0) == 4 * kMiB);
  CHECK(t.Staged(1) == 0);

  t.Remove(&rc);
  CHECK(t.Bytes(0, /*resident=*/true) == 64 * kMiB);
  CHECK(t.Staged(0) == 0);
}

TEST_CASE("RegionTable: Find gives the region around an address") {
  Chunk a[1] = {{0, 2 * kMiB, 1, nullptr, kResident}};
  Chunk b[1] = {{0, 4 * kMiB, 1, nullptr, kResident}};
  Region ra = MakeRegion(8 * kMiB, 2 * kMiB, 0, a, 1);
  Region rb = MakeRegion(2 * kMiB, 4 * kMiB, 0, b, 1);
  Table t;
  REQUIRE(t.Insert(&ra));
  REQUIRE(t.Insert(&rb));
  CHECK(t.count() == 2);
  CHECK(t[0] == &rb);
  CHECK(t.Find(2 * kMiB + 4096) == &rb);
  CHECK(t.Find(6 * kMiB) == nullptr);
  CHECK(t.Find(10 * kMiB - 1) == &ra);
  CHECK(t.Find(10 * kMiB) == nullptr);
}

TEST_CASE("RegionTable: SlabWithRoom is the first slab with that block size and device, not full") {
  Chunk chunk[5] = {};
  const int blocks_512 = static_cast<int>(kGranule >> 9);
  Region full = MakeRegion(2 * kGranule, kGranule, 0, &chunk[0], 1);
  full.block_shift = 9;
  full.used_blocks = blocks_512;
  Region later = MakeRegion(9 * kGranule, kGranule, 0, &chunk[1], 1);
  later.block_shift = 9;
  later.used_blocks = 3;
  Region room = MakeRegion(5 * kGranule, kGranule, 0, &chunk[2], 1);
  room.block_shift = 9;
  room.used_blocks = blocks_512 - 1;
  Region other_size = MakeRegion(1 * kGranule, kGranule, 0, &chunk[3], 1);
  other_size.block_shift = 10;
  Region other_device = MakeRegion(3 * kGranule, kGranule, 1, &chunk[4], 1);
  other_device.block_shift = 9;
  Table t;
  for (Region* r : {&later, &room, &full, &other_size, &other_device}) REQUIRE(t.Insert(r));

  CHECK(t.SlabWithRoom(0, 9) == &room);  // before `later` by address; `full` has none
  CHECK(t.SlabWithRoom(0, 10) == &other_size);
  CHECK(t.SlabWithRoom(1, 9) == &other_device);
  CHECK(t.SlabWithRoom(1, 10) == nullptr);
  CHECK(t.SlabWithRoom(0, 11) == nullptr);
  room.used_blocks = blocks_512;
  CHECK(t.SlabWithRoom(0, 9) == &later);
}

}  // namespace
}  // namespace gshare::shim::unit_region_table
