// The host memory the daemon lets swapped-out and staged memory take ([memory] host_budget and
// host_budget_per_user, docs/memory.md): bytes, or a percentage of the machine's RAM
// (sysconf(_SC_PHYS_PAGES) pages). Thread-safe.
#pragma once

#include <cstdint>

#include "base/config.h"

namespace gshare {

// [memory] host_budget in bytes; half the RAM when it does not parse (the config loader
// refuses such a value first).
uint64_t HostBudgetBytes(const Config& config);
// [memory] host_budget_per_user in bytes; 0 (no limit) when unset or not parsed.
uint64_t UserHostBudgetBytes(const Config& config);
// The machine's RAM in bytes: what a budget's "%" is of.
uint64_t PhysicalRamBytes();

}  // namespace gshare
