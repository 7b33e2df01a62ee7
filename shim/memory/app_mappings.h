// AppMappings: where the application mapped the swap engine's handles (swap_records.h), sorted
// by address for lookups and linked into each handle's list, which the engine maps again at
// each re-creation of the handle (MapAll) and unmaps at each release (UnmapAll). Owns the
// mappings (malloc'd) from Add to Remove. Not synchronized: SwapSpace's mu_ guards it, but for
// count(), which may be read without it (a snapshot). Errors: Reserve returns false when the
// index cannot grow; MapAll drops a mapping the driver refuses, with one line on stderr.
#pragma once

#include <cstdint>
#include <cstdlib>

#include "driver/cuda_abi.h"
#include "memory/span_index.h"
#include "memory/swap_records.h"

namespace gshare::shim {

class AppMappings {
 public:
  using AppHandle = swap_internal::AppHandle;
  using AppMapping = swap_internal::AppMapping;

  constexpr AppMappings() = default;
  AppMappings(const AppMappings&) = delete;
  AppMappings& operator=(const AppMappings&) = delete;

  int count() const { return index_.count(); }
  // The i-th mapping by address, 0 <= i < count().
  AppMapping* operator[](int i) const { return index_[i]; }
  // The index of the first mapping that overlaps [va, va + size); -1 when none does.
  int First(gs_cuda::CUdeviceptr va, uint64_t size) const { return index_.First(va, size); }
  // Room for one mapping more.
  bool Reserve() { return index_.Reserve(); }
  // Adds `m` (every field set but `next`; it overlaps no other) to the index and to the front
  // of its handle's list (m->owner->app). Cannot fail after Reserve.
  void Add(AppMapping* m) {
    AppHandle* app = m->owner->app;
    m->next = app->maps;
    app->maps = m;
    index_.Insert(m);
  }
  // Takes `m` out of the index and its handle's list and frees it.
  void Remove(AppMapping* m) {
    index_.Remove(m);
    for (AppMapping** link = &m->owner->app->maps; *link != nullptr; link = &(*link)->next) {
      if (*link == m) {
        *link = m->next;
        break;
      }
    }
    std::free(m->access);
    std::free(m);
  }

  // Maps each of `app`'s mappings to `real` (the driver's handle now behind it) and sets the
  // access the application set there; a mapping the driver refuses is dropped (Remove).
  // Driver calls (app_mappings.cc).
  void MapAll(AppHandle& app, gs_cuda::CUmemGenericAllocationHandle real);
  // Unmaps each of `app`'s mappings (the driver's handle behind them goes).
  void UnmapAll(const AppHandle& app) const;

  // Frees the index's array (not the mappings). The engine's index lives until the process
  // exits, so only tests call this.
  void Reset() { index_.Reset(); }

 private:
  SpanIndex<AppMapping, 1024> index_;  // 1024 mappings first, then doubling
};

}  // namespace gshare::shim
