// The swap engine's index of address spans (its regions, the application's mappings): sorted
// by base whatever the insertion order, found by any address inside, growing past its first
// capacity.
#include "memory/span_index.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "freed.h"

namespace gshare::shim::unit_span_index {
namespace {

struct Span {
  uint64_t base;
  uint64_t size;
};

template <int kFirstCapacity>
using Index = unit_freed::Freed<SpanIndex<Span, kFirstCapacity>>;

// Inserts `spans` in the order given; each insert must succeed.
template <int kFirstCapacity>
void InsertAll(Index<kFirstCapacity>& index, std::initializer_list<Span*> spans) {
  for (Span* span : spans) REQUIRE(index.Insert(span));
}

TEST_CASE("SpanIndex: spans inserted out of order are kept by base and found from inside") {
  Index<4> index;
  Span a{1000, 100}, b{2000, 500}, c{3000, 100};
  InsertAll(index, {&c, &a, &b});
  REQUIRE(index.count() == 3);
  CHECK(index[0] == &a);
  CHECK(index[1] == &b);
  CHECK(index[2] == &c);

  CHECK(index.Find(1000) == &a);
  CHECK(index.Find(1099) == &a);
  CHECK(index.Find(2000) == &b);
  CHECK(index.Find(2250) == &b);
  CHECK(index.Find(2499) == &b);
  CHECK(index.Find(3050) == &c);
  // Before the first, in the gaps, at an end (exclusive) and past the last: none.
  CHECK(index.Find(0) == nullptr);
  CHECK(index.Find(999) == nullptr);
  CHECK(index.Find(1100) == nullptr);
  CHECK(index.Find(1500) == nullptr);
  CHECK(index.Find(2500) == nullptr);
  CHECK(index.Find(3100) == nullptr);
  CHECK(index.Find(UINT64_MAX) == nullptr);
}

TEST_CASE("SpanIndex: First is the first span that overlaps a range") {
  Index<4> index;
  Span a{1000, 100}, b{2000, 500}, c{3000, 100};
  InsertAll(index, {&b, &c, &a});

  CHECK(index.First(1050, 1) == 0);
  CHECK(index.First(0, 1001) == 0);     // ends on a's first byte
  CHECK(index.First(0, 1000) == -1);    // ends right before a
  CHECK(index.First(1100, 900) == -1);  // the gap between a and b exactly
  CHECK(index.First(1100, 901) == 1);   // reaches b's first byte
  CHECK(index.First(1099, 5000) == 0);  // a's last byte and everything after: a comes first
  CHECK(index.First(2499, 1) == 1);
  CHECK(index.First(2500, 500) == -1);
  CHECK(index.First(2500, 501) == 2);
  CHECK(index.First(3100, 1000) == -1);
}

TEST_CASE("SpanIndex: Remove takes out that span, by identity, and nothing else") {
  Index<4> index;
  Span a{1000, 100}, b{2000, 500}, c{3000, 100};
  InsertAll(index, {&a, &b, &c});

  Span lookalike = b;  // same range, not in the index
  index.Remove(&lookalike);
  CHECK(index.count() == 3);
  CHECK(index.Find(2000) == &b);

  index.Remove(&b);
  CHECK(index.count() == 2);
  CHECK(index[0] == &a);
  CHECK(index[1] == &c);
  CHECK(index.Find(2000) == nullptr);
  CHECK(index.Find(3000) == &c);
  CHECK(index.First(2000, 500) == -1);

  index.Remove(&b);  // gone already
  CHECK(index.count() == 2);
  index.Remove(&a);
  index.Remove(&c);
  CHECK(index.count() == 0);
  CHECK(index.Find(1000) == nullptr);
  CHECK(index.First(0, UINT64_MAX) == -1);
}

TEST_CASE("SpanIndex: it grows past its first capacity and keeps every span in order") {
  Index<2> index;
  constexpr int kSpans = 300;
  std::vector<Span> spans(kSpans);
  for (int i = 0; i < kSpans; ++i) spans[i] = {static_cast<uint64_t>(i) * 4096, 1024};
  // Inserted in a scrambled order (7 is prime to 300: every span once).
  for (int k = 0; k < kSpans; ++k) REQUIRE(index.Insert(&spans[(k * 7) % kSpans]));
  REQUIRE(index.count() == kSpans);
  for (int i = 0; i < kSpans; ++i) {
    CHECK(index[i] == &spans[i]);
    CHECK(index.Find(spans[i].base + 1023) == &spans[i]);
    CHECK(index.Find(spans[i].base + 1024) == nullptr);
    CHECK(index.First(spans[i].base + 512, 4096) == i);
  }
}

TEST_CASE("SpanIndex: Reserve makes room without adding a span") {
  Index<1> index;
  Span a{4096, 4096}, b{0, 4096};
  CHECK(index.Reserve());
  CHECK(index.count() == 0);
  REQUIRE(index.Insert(&a));
  CHECK(index.Reserve());  // full: grows
  CHECK(index.count() == 1);
  REQUIRE(index.Insert(&b));
  CHECK(index[0] == &b);
  CHECK(index[1] == &a);
}

}  // namespace
}  // namespace gshare::shim::unit_span_index
