// Where the application mapped the swap engine's handles: found by address, linked into each
// handle's list, taken out of both (and freed) by Remove.
#include "memory/app_mappings.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>

#include "freed.h"

namespace gshare::shim::unit_app_mappings {
namespace {

using swap_internal::AppHandle;
using swap_internal::AppMapping;
using swap_internal::Region;

constexpr uint64_t kMiB = 1ull << 20;

using Maps = unit_freed::Freed<AppMappings>;

// A mapping as AppMap makes it: malloc'd, since Remove frees it.
AppMapping* NewMapping(Region* owner, uint64_t base, uint64_t size) {
  auto* m = static_cast<AppMapping*>(std::calloc(1, sizeof(AppMapping)));
  *m = AppMapping{base, size, 0, owner, nullptr, 0, nullptr};
  return m;
}

// The handle's mappings, newest first, as a count; -1 when `m` is not among them.
int PlaceInList(const AppHandle& app, const AppMapping* m) {
  int i = 0;
  for (const AppMapping* p = app.maps; p != nullptr; p = p->next, ++i) {
    if (p == m) return i;
  }
  return -1;
}

TEST_CASE("AppMappings: Add indexes by address and links into the handle's list") {
  AppHandle h{};
  Region r{};
  r.app = &h;
  Maps maps;
  REQUIRE(maps.Reserve());
  AppMapping* high = NewMapping(&r, 64 * kMiB, 20 * kMiB);
  maps.Add(high);
  REQUIRE(maps.Reserve());
  AppMapping* low = NewMapping(&r, 16 * kMiB, 20 * kMiB);
  maps.Add(low);

  CHECK(maps.count() == 2);
  CHECK(maps[0] == low);
  CHECK(maps[1] == high);
  CHECK(maps.First(64 * kMiB + 5, 1) == 1);
  CHECK(maps.First(36 * kMiB, 28 * kMiB) == -1);  // the gap
  CHECK(maps.First(0, 17 * kMiB) == 0);
  CHECK(h.maps == low);  // newest first
  CHECK(low->next == high);
  CHECK(high->next == nullptr);
  maps.Remove(low);
  maps.Remove(high);
}

TEST_CASE("AppMappings: Remove takes a mapping out of the index and its handle's list") {
  AppHandle h1{}, h2{};
  Region r1{}, r2{};
  r1.app = &h1;
  r2.app = &h2;
  Maps maps;
  AppMapping* m[4];
  for (int i = 0; i < 4; ++i) {
    REQUIRE(maps.Reserve());
    m[i] = NewMapping(i % 2 == 0 ? &r1 : &r2, static_cast<uint64_t>(i) * 2 * kMiB, 2 * kMiB);
    maps.Add(m[i]);
  }
  // The access the application set goes with it (ASan sees a leak otherwise).
  m[2]->access = static_cast<gs_cuda::CUmemAccessDesc*>(std::calloc(2, sizeof(*m[2]->access)));
  m[2]->naccess = 2;
  REQUIRE(PlaceInList(h1, m[0]) == 1);
  REQUIRE(PlaceInList(h1, m[2]) == 0);

  maps.Remove(m[2]);  // the head of h1's list
  CHECK(maps.count() == 3);
  CHECK(maps.First(4 * kMiB, 2 * kMiB) == -1);
  CHECK(maps[2] == m[3]);
  CHECK(h1.maps == m[0]);
  CHECK(m[0]->next == nullptr);
  CHECK(PlaceInList(h2, m[1]) == 1);  // the other handle's list is untouched
  CHECK(PlaceInList(h2, m[3]) == 0);

  maps.Remove(m[1]);  // the tail of h2's list
  CHECK(h2.maps == m[3]);
  CHECK(m[3]->next == nullptr);
  CHECK(maps.First(2 * kMiB, 1) == -1);
  CHECK(maps.First(6 * kMiB, 1) == 1);

  maps.Remove(m[0]);
  maps.Remove(m[3]);
  CHECK(maps.count() == 0);
  CHECK(h1.maps == nullptr);
  CHECK(h2.maps == nullptr);
}

}  // namespace
}  // namespace gshare::shim::unit_app_mappings
