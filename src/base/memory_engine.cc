#include "base/memory_engine.h"

namespace gshare {

std::string_view MemoryEngineName(MemoryEngine engine) {
  switch (engine) {
    case MemoryEngine::kSwap: return "swap";
    case MemoryEngine::kManaged: return "managed";
    case MemoryEngine::kCheckpoint: return "checkpoint";
    case MemoryEngine::kOff: return "off";
  }
  return "?";
}

std::optional<MemoryEngine> ParseMemoryEngine(std::string_view name) {
  for (MemoryEngine e : {MemoryEngine::kSwap, MemoryEngine::kManaged, MemoryEngine::kCheckpoint,
                         MemoryEngine::kOff}) {
    if (name == MemoryEngineName(e)) return e;
  }
  return std::nullopt;
}

}  // namespace gshare
