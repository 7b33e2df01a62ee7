// Linear probing with tombstones; rebuilt when more than 70% of slots are taken.
#include "memory/alloc_table.h"

#include <cstdlib>

namespace gshare::shim {
namespace {
size_t Hash(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;  // the 64-bit finalizer of MurmurHash3
  k ^= k >> 33;
  return static_cast<size_t>(k);
}
}  // namespace

bool AllocTable::GrowLocked() {
  // Mostly tombstones: rebuild at the same size; else double.
  size_t cap = capacity_ == 0 ? 1024 : (used_ * 4 < capacity_ ? capacity_ : capacity_ * 2);
  Slot* slots = static_cast<Slot*>(std::calloc(cap, sizeof(Slot)));
  if (slots == nullptr) return false;
  for (size_t i = 0; i < capacity_; ++i) {
    if (slots_[i].state != 1) continue;
    size_t j = Hash(slots_[i].key) & (cap - 1);
    while (slots[j].state == 1) j = (j + 1) & (cap - 1);
    slots[j] = slots_[i];
  }
  std::free(slots_);
  slots_ = slots;
  capacity_ = cap;
  deleted_ = 0;
  return true;
}

bool AllocTable::Add(uint64_t key, int device, uint64_t bytes) {
  mu_.Lock();
  if ((used_ + deleted_ + 1) * 10 > capacity_ * 7 && !GrowLocked()) {
    mu_.Unlock();
    return false;
  }
  size_t j = Hash(key) & (capacity_ - 1);
  while (slots_[j].state == 1 && slots_[j].key != key) j = (j + 1) & (capacity_ - 1);
  if (slots_[j].state != 1) {
    if (slots_[j].state == 2) --deleted_;
    ++used_;
  }
  slots_[j] = {key, bytes, device, 1};
  mu_.Unlock();
  return true;
}

bool AllocTable::Remove(uint64_t key, int* device, uint64_t* bytes) {
  mu_.Lock();
  bool found = false;
  if (capacity_ != 0) {
    size_t j = Hash(key) & (capacity_ - 1);
    while (slots_[j].state != 0) {
      if (slots_[j].state == 1 && slots_[j].key == key) {
        *device = slots_[j].device;
        *bytes = slots_[j].bytes;
        slots_[j].state = 2;
        --used_;
        ++deleted_;
        found = true;
        break;
      }
      j = (j + 1) & (capacity_ - 1);
    }
  }
  mu_.Unlock();
  return found;
}

size_t AllocTable::size() {
  MutexLock lock(mu_);
  return used_;
}

}  // namespace gshare::shim
