// AllocTable: the process's device allocations (key = device pointer or VMM handle), with
// their device and size, so frees can be accounted and the daemon told the bytes held per
// GPU. Open addressing on malloc'd storage; a mutex per table (allocation calls are not
// the hot path). Any thread; not for unsafe contexts.
#pragma once

#include <cstddef>
#include <cstdint>

#include "mutex.h"

namespace gshare::shim {

class AllocTable {
 public:
  // Records `key`. Returns false (and records nothing) when memory for the table runs out.
  bool Add(uint64_t key, int device, uint64_t bytes) EXCLUDES(mu_);
  // Forgets `key`; returns false when it was unknown, else fills device and bytes.
  bool Remove(uint64_t key, int* device, uint64_t* bytes) EXCLUDES(mu_);
  size_t size() EXCLUDES(mu_);

 private:
  struct Slot {
    uint64_t key;
    uint64_t bytes;
    int device;
    int state;  // 0 empty, 1 used, 2 deleted
  };
  bool GrowLocked() REQUIRES(mu_);
  Mutex mu_;
  Slot* slots_ GUARDED_BY(mu_) PT_GUARDED_BY(mu_) = nullptr;
  size_t capacity_ GUARDED_BY(mu_) = 0;  // a power of two
  size_t used_ GUARDED_BY(mu_) = 0;
  size_t deleted_ GUARDED_BY(mu_) = 0;
};

}  // namespace gshare::shim
