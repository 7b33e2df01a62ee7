#include "daemon/gpu/host_budget.h"

#include <unistd.h>

#include "base/byte_size.h"

namespace gshare {

uint64_t PhysicalRamBytes() {
  return static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
         static_cast<uint64_t>(sysconf(_SC_PAGE_SIZE));
}

uint64_t HostBudgetBytes(const Config& config) {
  const uint64_t ram = PhysicalRamBytes();
  Result<uint64_t> b = ParseByteSizeOrPercent(config.memory.host_budget, ram);
  return b.ok() ? b.value() : ram / 2;
}

uint64_t UserHostBudgetBytes(const Config& config) {
  if (config.memory.host_budget_per_user.empty()) return 0;
  Result<uint64_t> b =
      ParseByteSizeOrPercent(config.memory.host_budget_per_user, PhysicalRamBytes());
  return b.ok() ? b.value() : 0;  // "0", as for host_budget: no limit
}

}  // namespace gshare
