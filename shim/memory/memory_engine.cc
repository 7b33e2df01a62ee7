#include "memory/memory_engine.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace gshare::shim {
namespace {
// 0: not read yet; else 1 + the engine. Racing first readers compute the same answer.
std::atomic<int> g_engine{0};

proto::MemoryEngine Parse(const char* m) {
  if (m == nullptr || m[0] == '\0' || std::strcmp(m, "swap") == 0)
    return proto::MemoryEngine::kSwap;
  if (std::strcmp(m, "managed") == 0) return proto::MemoryEngine::kManaged;
  if (std::strcmp(m, "checkpoint") == 0) return proto::MemoryEngine::kCheckpoint;
  return proto::MemoryEngine::kOff;
}
}  // namespace

proto::MemoryEngine RequestedMemoryEngine() {
  int known = g_engine.load(std::memory_order_acquire);
  if (__builtin_expect(known != 0, 1)) return static_cast<proto::MemoryEngine>(known - 1);
  proto::MemoryEngine e = Parse(std::getenv("GSHARE_MEMORY"));
  g_engine.store(static_cast<int>(e) + 1, std::memory_order_release);
  return e;
}

}  // namespace gshare::shim
