// SmPartition (sm_partition.h): the shim's one SmPartitions, over the real driver's entry
// points and GSHARE_PRIORITY_SM_PCT.
#include <cstdlib>

#include "driver/census.h"
#include "driver/real_driver.h"
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

// GSHARE_PRIORITY_NARROW_DEPTH: 1..SmPartitions::kMaxDepth, or 0 (unset, or out of range) for
// no bound.
int NarrowDepthFromEnv() {
  const char* env = std::getenv("GSHARE_PRIORITY_NARROW_DEPTH");
  if (env == nullptr || *env == '\0') return 0;
  long v = std::atol(env);
  return v < 1 || v > SmPartitions::kMaxDepth ? 0 : static_cast<int>(v);
}

constinit SmPartitions g_table(&Extras, &SmPctFromEnv, &NarrowDepthFromEnv);

}  // namespace

bool SmPartition::Possible(int device) { return g_table.Possible(device); }

Narrowed SmPartition::Enter(int device, CUstream stream, bool per_thread) {
  Narrowed n = g_table.Enter(device, stream, per_thread);
  if (n.green != nullptr && g_census_on) {
    g_census_narrowed.fetch_add(1, std::memory_order_relaxed);
    if (n.waited) g_census_narrow_waits.fetch_add(1, std::memory_order_relaxed);
  }
  return n;
}

void SmPartition::Leave(const Narrowed& n) { g_table.Leave(n); }

void SmPartition::ResetAfterFork() { g_table.Reset(); }

}  // namespace gshare::shim
