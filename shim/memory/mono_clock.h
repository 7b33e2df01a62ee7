// The shim's clock (the memory engines', the lanes' and the lease client's): CLOCK_MONOTONIC
// in nanoseconds. Any thread, no lock, no allocation.
#pragma once

#include <time.h>

#include <cstdint>

namespace gshare::shim {

inline int64_t MonoNowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

}  // namespace gshare::shim
