// SpanIndex<T, kFirstCapacity>: address spans that do not overlap, looked up by address. T has
// `base` (an address) and `size` (bytes, more than 0); the index keeps T* in a malloc'd array
// sorted by base (lookups are binary searches, inserts and removals move the tail) and owns no T.
// Not synchronized: its owner's lock guards it, but for count(), which may be read without it (a
// snapshot). Errors: Reserve and Insert return false when the array cannot grow.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace gshare::shim {

// kFirstCapacity: the spans the array holds when first needed; it doubles when full. (A template
// argument, not a member: the engine's instance then has no non-zero field and costs the library
// no initialized data.)
template <class T, int kFirstCapacity>
class SpanIndex {
 public:
  constexpr SpanIndex() = default;
  SpanIndex(const SpanIndex&) = delete;
  SpanIndex& operator=(const SpanIndex&) = delete;

  int count() const { return count_.load(std::memory_order_relaxed); }
  // The i-th span by address, 0 <= i < count().
  T* operator[](int i) const { return items_[i]; }
  // The span that holds `address`; nullptr when none does.
  T* Find(uint64_t address) const {
    int lo = 0, hi = count();  // the first span with base > address
    while (lo < hi) {
      int mid = (lo + hi) / 2;
      if (items_[mid]->base <= address) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    if (lo == 0) return nullptr;
    T* t = items_[lo - 1];
    return address < t->base + t->size ? t : nullptr;
  }
  // The index of the first span that overlaps [start, start + bytes); -1 when none does.
  int First(uint64_t start, uint64_t bytes) const {
    const int n = count();
    int lo = 0, hi = n;  // the first span that ends after start
    while (lo < hi) {
      int mid = (lo + hi) / 2;
      if (items_[mid]->base + items_[mid]->size <= start) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo < n && items_[lo]->base < start + bytes ? lo : -1;
  }
  // Room for one span more, growing the array when it is full.
  bool Reserve() {
    if (count() < capacity_) return true;
    int cap = capacity_ == 0 ? kFirstCapacity : capacity_ * 2;
    auto* grown = static_cast<T**>(std::realloc(items_, sizeof(T*) * cap));
    if (grown == nullptr) return false;
    items_ = grown;
    capacity_ = cap;
    return true;
  }
  // Adds `t` in its place by base (after Reserve, it cannot fail).
  bool Insert(T* t) {
    if (!Reserve()) return false;
    int i = count();
    while (i > 0 && items_[i - 1]->base > t->base) {
      items_[i] = items_[i - 1];
      --i;
    }
    items_[i] = t;
    count_.store(count() + 1, std::memory_order_relaxed);
    return true;
  }
  // Takes `t` out; nothing when it is not in the index.
  void Remove(T* t) {
    const int n = count();
    int i = First(t->base, 1);
    if (i < 0 || items_[i] != t) return;
    std::memmove(items_ + i, items_ + i + 1, sizeof(T*) * (n - i - 1));
    count_.store(n - 1, std::memory_order_relaxed);
  }
  // Empties the index and frees its array. The swap engine's indexes live until the process
  // exits (its threads may still look up at exit), so only tests call this.
  void Reset() {
    std::free(items_);
    items_ = nullptr;
    count_.store(0, std::memory_order_relaxed);
    capacity_ = 0;
  }

 private:
  T** items_ = nullptr;  // sorted by base; capacity_ entries
  std::atomic<int> count_{0};
  int capacity_ = 0;
};

}  // namespace gshare::shim
