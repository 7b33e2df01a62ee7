// The memory engines by name (base/memory_engine.h): every name the options accept reads back as
// the engine the wire carries, and nothing else reads as one.
#include "base/memory_engine.h"

#include <doctest/doctest.h>

#include <string>

namespace gshare::unit_memory_engine {
namespace {

TEST_CASE("memory engines: each name is one engine and back; the wire's values unchanged") {
  for (const char* name : kMemoryEngines) {
    CAPTURE(name);
    const std::optional<MemoryEngine> e = ParseMemoryEngine(name);
    REQUIRE(e);
    CHECK(MemoryEngineName(*e) == name);
  }
  CHECK(ParseMemoryEngine("swap") == MemoryEngine::kSwap);
  CHECK(static_cast<uint32_t>(MemoryEngine::kOff) == 0);  // what an old shim sends for none
  CHECK(static_cast<uint32_t>(MemoryEngine::kCheckpoint) == 3);
  for (const char* bad : {"", "Swap", "swap ", "unified", "none"}) {
    CAPTURE(bad);
    CHECK_FALSE(ParseMemoryEngine(bad));
  }
  CHECK(MemoryEngineName(static_cast<MemoryEngine>(7)) == "?");
}

}  // namespace
}  // namespace gshare::unit_memory_engine
