// The numbers behind the swap engine's ids for the application's own handles: 1, 2, ...; a
// freed one is given out again, the lowest first; a claimed one is not, and names nothing until
// it is bound; the table grows past its first capacity.
#include "memory/handle_ids.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "freed.h"

namespace gshare::shim::unit_handle_ids {
namespace {

struct Thing {
  int n;
};

using Ids = unit_freed::Freed<HandleIds<Thing>>;

TEST_CASE("HandleIds: numbers start at 1 and name what they were bound to") {
  Ids ids;
  Thing a{1}, b{2};
  CHECK(ids.Find(1) == nullptr);  // nothing yet (no array either)
  uint64_t first = ids.NextFree();
  CHECK(first == 1);
  CHECK(ids.NextFree() == 1);  // free until bound
  ids.Bind(first, &a);
  uint64_t second = ids.NextFree();
  CHECK(second == 2);
  ids.Bind(second, &b);
  CHECK(ids.Find(1) == &a);
  CHECK(ids.Find(2) == &b);
  CHECK(ids.Find(3) == nullptr);
  CHECK(ids.Find(0) == nullptr);
  CHECK(ids.Find(UINT64_MAX) == nullptr);
  CHECK(ids.Find(1ull << 40) == nullptr);
}

TEST_CASE("HandleIds: a freed number is given out again, the lowest first") {
  Ids ids;
  Thing t[6] = {};
  for (int i = 1; i <= 5; ++i) {
    uint64_t n = ids.NextFree();
    REQUIRE(n == static_cast<uint64_t>(i));
    ids.Bind(n, &t[i]);
  }
  ids.Unbind(4);
  ids.Unbind(2);
  CHECK(ids.Find(2) == nullptr);
  CHECK(ids.Find(4) == nullptr);
  CHECK(ids.Find(3) == &t[3]);
  CHECK(ids.NextFree() == 2);
  ids.Bind(2, &t[0]);
  CHECK(ids.Find(2) == &t[0]);
  CHECK(ids.NextFree() == 4);
  ids.Bind(4, &t[4]);
  CHECK(ids.NextFree() == 6);
}

TEST_CASE("HandleIds: a claimed number is not given out again and names nothing until bound") {
  Ids ids;
  Thing a{1}, b{2}, c{3};
  for (Thing* t : {&a, &b, &c}) ids.Bind(ids.NextFree(), t);
  ids.Unbind(2);
  const uint64_t claimed = ids.NextFree();
  REQUIRE(claimed == 2);
  ids.Claim(claimed);
  CHECK(ids.Find(claimed) == nullptr);
  // A lower number freed and taken again: the search for the next passes the claimed one.
  ids.Unbind(1);
  REQUIRE(ids.NextFree() == 1);
  ids.Bind(1, &a);
  CHECK(ids.NextFree() == 4);
  ids.Bind(claimed, &b);
  CHECK(ids.Find(claimed) == &b);
  // A claim given up (the handle could not be made) frees its number again.
  const uint64_t given_up = ids.NextFree();
  ids.Claim(given_up);
  ids.Unbind(given_up);
  CHECK(ids.NextFree() == given_up);
  CHECK(ids.Find(given_up) == nullptr);
}

TEST_CASE("HandleIds: the table grows past its first capacity, new numbers naming nothing") {
  Ids ids;
  constexpr int kFirst = HandleIds<Thing>::kFirstCapacity;
  std::vector<Thing> things(kFirst + 2);
  for (int i = 0; i < kFirst; ++i) {
    uint64_t n = ids.NextFree();
    REQUIRE(n == static_cast<uint64_t>(i) + 1);
    ids.Bind(n, &things[i]);
  }
  CHECK(ids.Find(kFirst + 1) == nullptr);  // past the array
  uint64_t n = ids.NextFree();             // all taken: grows
  CHECK(n == kFirst + 1);
  ids.Bind(n, &things[kFirst]);
  CHECK(ids.Find(kFirst + 1) == &things[kFirst]);
  CHECK(ids.Find(kFirst + 2) == nullptr);  // grown, zeroed
  CHECK(ids.Find(2 * kFirst) == nullptr);
  for (int i = 0; i < kFirst; ++i) CHECK(ids.Find(i + 1) == &things[i]);  // kept
  ids.Unbind(10);
  CHECK(ids.NextFree() == 10);
}

}  // namespace
}  // namespace gshare::shim::unit_handle_ids
