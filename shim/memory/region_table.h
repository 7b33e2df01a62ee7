// RegionTable: the swap engine's regions (swap_records.h) by address, and what each device's
// chunks add up to. Owns no region. Not synchronized: SwapSpace's mu_ guards it. Errors:
// Insert returns false when the table cannot grow. Sizes in bytes.
#pragma once

#include <cstdint>

#include "memory/span_index.h"
#include "memory/swap_records.h"

namespace gshare::shim {

class RegionTable {
 public:
  using Region = swap_internal::Region;

  constexpr RegionTable() = default;
  RegionTable(const RegionTable&) = delete;
  RegionTable& operator=(const RegionTable&) = delete;

  int count() const { return index_.count(); }
  // The i-th region by address, 0 <= i < count().
  Region* operator[](int i) const { return index_[i]; }
  // The region whose reserved range holds `address`; nullptr when none does.
  Region* Find(uint64_t address) const { return index_.Find(address); }
  bool Insert(Region* r) { return index_.Insert(r); }
  void Remove(Region* r) { index_.Remove(r); }

  // Bytes of `device`'s chunks for which `counts(chunk)` holds.
  template <typename Pred>
  uint64_t ChunkBytes(int device, Pred counts) const {
    uint64_t bytes = 0;
    for (int ri = 0; ri < count(); ++ri) {
      const Region* r = index_[ri];
      if (r->device != device) continue;
      for (int ci = 0; ci < r->nchunks; ++ci) {
        if (counts(r->chunks[ci])) bytes += r->chunks[ci].bytes;
      }
    }
    return bytes;
  }
  // Bytes of `device`'s chunks that are resident (or, with resident false, are not).
  uint64_t Bytes(int device, bool resident) const {
    return ChunkBytes(device, [resident](const swap_internal::Chunk& c) {
      return (c.state == swap_internal::kResident) == resident;
    });
  }
  // Bytes of `device`'s chunks never backed (kFresh): no data anywhere yet.
  uint64_t Fresh(int device) const {
    return ChunkBytes(
        device, [](const swap_internal::Chunk& c) { return c.state == swap_internal::kFresh; });
  }
  // Bytes of `device`'s staged chunks (resident, with a current copy in host memory).
  uint64_t Staged(int device) const {
    return ChunkBytes(device, [](const swap_internal::Chunk& c) { return c.staged(); });
  }
  // The first slab (by address) on `device` whose blocks are 1 << `shift` bytes and which has
  // a free one; nullptr when there is none.
  Region* SlabWithRoom(int device, int shift) const {
    const int blocks = static_cast<int>(swap_internal::kGranule >> shift);
    for (int i = 0; i < count(); ++i) {
      Region* r = index_[i];
      if (r->block_shift == shift && r->device == device && r->used_blocks < blocks) return r;
    }
    return nullptr;
  }

  // Frees the table's array. The engine's table lives until the process exits, so only tests
  // call this.
  void Reset() { index_.Reset(); }

 private:
  SpanIndex<Region, 256> index_;  // 256 regions first, then doubling
};

}  // namespace gshare::shim
