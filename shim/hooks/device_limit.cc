#include "hooks/device_limit.h"

#include <atomic>
#include <cstdlib>

namespace gshare::shim {

int DeviceLimit() {
  static std::atomic<int> limit{-1};
  int n = limit.load(std::memory_order_relaxed);
  if (n >= 0) return n;
  const char* env = std::getenv("GSHARE_DEVICE_COUNT");
  n = 0;
  if (env != nullptr && *env != '\0') {
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (*end == '\0' && v > 0 && v < 1000) n = static_cast<int>(v);
  }
  limit.store(n, std::memory_order_relaxed);
  return n;
}

}  // namespace gshare::shim
