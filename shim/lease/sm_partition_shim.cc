// SmPartition (sm_partition.h): the shim's one SmPartitions, over the real driver's entry
// points and GSHARE_PRIORITY_SM_PCT.
#include <atomic>
#include <cstdlib>

#include "hooks/census.h"
#include "hooks/real_driver.h"
#include "lease/sm_partition.h"

namespace gshare::shim {
namespace {

// GSHARE_PRIORITY_SM_PCT: 1..99, or 0 for no partition.
int SmPctFromEnv() {
  const char* env = std::getenv("GSHARE_PRIORITY_SM_PCT");
  if (env == nullptr || *env == '\0') return kDefaultBusySmPct;
  long v = std::atol(env);
  return v <= 0 || v >= 100 ? 0 : static_cast<int>(v);
}

// Made at first use, after the driver is loaded (the hooks' first call loads it). g_made
// says it was, for the fork handler (which must not be the one to make it).
std::atomic<SmPartitions*> g_made{nullptr};
SmPartitions& Table() {
  static SmPartitions table(&Extras(), SmPctFromEnv());
  g_made.store(&table, std::memory_order_release);
  return table;
}

}  // namespace

bool SmPartition::Possible(int device) { return Table().Possible(device); }

Narrowed SmPartition::Enter(int device, CUstream stream, bool per_thread) {
  Narrowed n = Table().Enter(device, stream, per_thread);
  if (n.green != nullptr && g_census_on) g_census_narrowed.fetch_add(1, std::memory_order_relaxed);
  return n;
}

void SmPartition::Leave(const Narrowed& n) { Table().Leave(n); }

void SmPartition::ResetAfterFork() {
  if (SmPartitions* t = g_made.load(std::memory_order_acquire)) t->Reset();
}

}  // namespace gshare::shim
