// AllocTable: the process's device allocations (key = device pointer or VMM handle), with
// their device and size, so frees can be accounted and the daemon told the bytes held per
// GPU. Open addressing on malloc'd storage; a mutex per table (allocation calls are not
// the hot path). Any thread; not for unsafe contexts.
#pragma once

#include <pthread.h>

#include <cstddef>
#include <cstdint>

namespace gshare::shim {

class AllocTable {
 public:
  // Records `key`. Returns false (and records nothing) when memory for the table runs out.
  bool Add(uint64_t key, int device, uint64_t bytes);
  // Forgets `key`; returns false when it was unknown, else fills device and bytes.
  bool Remove(uint64_t key, int* device, uint64_t* bytes);
  size_t size();

 private:
  struct Slot {
    uint64_t key;
    uint64_t bytes;
    int device;
    int state;  // 0 empty, 1 used, 2 deleted
  };
  bool GrowLocked();
  pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
  Slot* slots_ = nullptr;  // GUARDED_BY(mu_)
  size_t capacity_ = 0;    // GUARDED_BY(mu_), a power of two
  size_t used_ = 0;        // GUARDED_BY(mu_)
  size_t deleted_ = 0;     // GUARDED_BY(mu_)
};

}  // namespace gshare::shim
