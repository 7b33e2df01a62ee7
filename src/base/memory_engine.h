// The memory engines (docs/memory.md, "Engines") by name: what `--memory`, [memory] engine, a
// job's JSON and the jobs table say, and the wire's proto::MemoryEngine that the shim reports.
// Pure; any thread.
#pragma once

#include <array>
#include <optional>
#include <string_view>

#include "gshare/protocol.h"

namespace gshare {

using MemoryEngine = proto::MemoryEngine;

// The names `--memory` and [memory] engine accept, the default first.
inline constexpr std::array<const char*, 4> kMemoryEngines = {"swap", "managed", "checkpoint",
                                                              "off"};

// "swap", "managed", "checkpoint", "off"; "?" for a value no engine has (a newer shim's).
std::string_view MemoryEngineName(MemoryEngine engine);
// The engine `name` names, or nullopt.
std::optional<MemoryEngine> ParseMemoryEngine(std::string_view name);

}  // namespace gshare
