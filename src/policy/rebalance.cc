#include "policy/rebalance.h"

#include <algorithm>

namespace gshare {

std::optional<GpuKey> Rebalancer::Target(const Process& p, const std::vector<Gpu>& gpus) const {
  if (p.uses.size() != 1 || !p.sees_every_gpu || !p.checkpointed || p.suspended || !p.waiting) {
    return std::nullopt;
  }
  if (unsettled_.count(p.conn) != 0) return std::nullopt;  // no ping-pong before it ran
  auto on =
      std::find_if(gpus.begin(), gpus.end(), [&](const Gpu& g) { return g.key == p.uses[0]; });
  if (on == gpus.end() || on->name.empty() || on->total == 0) return std::nullopt;
  // It waits for a turn only while another job holds its GPU; a free GPU is its soon anyway.
  bool taken =
      std::any_of(on->holding.begin(), on->holding.end(), [&](JobId j) { return j != p.job; });
  if (!taken) return std::nullopt;
  const Gpu* best = nullptr;
  for (const Gpu& g : gpus) {
    if (&g == &*on || g.name != on->name || g.total != on->total) continue;
    if (!g.holding.empty() || g.room < p.bytes) continue;
    // Its own job may queue there: a gang waits on each of its exclusive GPUs.
    if (std::any_of(g.waiting.begin(), g.waiting.end(), [&](JobId j) { return j != p.job; })) {
      continue;
    }
    if (p.gang && !g.shared) continue;
    if (best == nullptr || g.room > best->room || (g.room == best->room && g.index < best->index)) {
      best = &g;
    }
  }
  if (best == nullptr) return std::nullopt;
  return best->key;
}

}  // namespace gshare
