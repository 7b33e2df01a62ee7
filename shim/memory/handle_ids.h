// HandleIds<T>: numbers 1, 2, ... that each name a T, for the swap engine's ids of the
// application's own cuMemCreate handles (SwapSpace sets its tag bit on them). A freed number is
// given out again, the lowest first. A malloc'd array of T* indexed by number - 1, zeroed as it
// grows; owns no T. Not synchronized: its owner's lock guards it. Errors: NextFree returns 0
// when the array cannot grow.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace gshare::shim {

template <class T>
class HandleIds {
 public:
  constexpr HandleIds() = default;
  HandleIds(const HandleIds&) = delete;
  HandleIds& operator=(const HandleIds&) = delete;

  // The T that `id` names; nullptr when none does (0, never given out, claimed or unbound).
  T* Find(uint64_t id) const {
    uint64_t slot = id - 1;
    if (slot >= static_cast<uint64_t>(capacity_)) return nullptr;
    return slots_[slot] == Claimed() ? nullptr : slots_[slot];
  }
  // A number that names nothing now, the lowest one (the array grows when all are taken); 0
  // when it cannot grow. It stays free until Claim or Bind.
  uint64_t NextFree() {
    for (int i = hint_; i < capacity_; ++i) {
      if (slots_[i] == nullptr) return static_cast<uint64_t>(i) + 1;
    }
    int cap = capacity_ == 0 ? kFirstCapacity : capacity_ * 2;
    auto* grown = static_cast<T**>(std::realloc(slots_, sizeof(T*) * cap));
    if (grown == nullptr) return 0;
    std::memset(grown + capacity_, 0, sizeof(T*) * (cap - capacity_));
    const int first_new = capacity_;
    slots_ = grown;
    capacity_ = cap;
    return static_cast<uint64_t>(first_new) + 1;
  }
  // `id` (from NextFree) is taken while its T is made, which may let the owner's lock go (a wait
  // for room): NextFree skips it and Find names nothing by it until Bind or Unbind.
  void Claim(uint64_t id) {
    slots_[id - 1] = Claimed();
    hint_ = static_cast<int>(id);
  }
  // `id` (from NextFree, claimed or not) names `t` from now on.
  void Bind(uint64_t id, T* t) {
    slots_[id - 1] = t;
    hint_ = static_cast<int>(id);
  }
  // `id` (bound or claimed) names nothing from now on and may be given out again.
  void Unbind(uint64_t id) {
    const int slot = static_cast<int>(id - 1);
    slots_[slot] = nullptr;
    if (slot < hint_) hint_ = slot;
  }
  // Frees the array. The swap engine's ids live until the process exits, so only tests call
  // this.
  void Reset() {
    std::free(slots_);
    slots_ = nullptr;
    capacity_ = 0;
    hint_ = 0;
  }

  static constexpr int kFirstCapacity = 1024;

 private:
  // What a claimed slot holds: an address no T has.
  static T* Claimed() { return reinterpret_cast<T*>(const_cast<char*>(&claimed_mark_)); }
  static constexpr char claimed_mark_ = 0;

  T** slots_ = nullptr;  // number - 1 -> T; capacity_ entries
  int capacity_ = 0;
  int hint_ = 0;  // where the search for a free number starts
};

}  // namespace gshare::shim
