#include "policy/idle_staging.h"

#include <algorithm>

#include "gshare/protocol.h"

namespace gshare {

std::vector<IdleStaging::Request> IdleStaging::Plan(const GpuKey& gpu, const GpuState& state,
                                                    const IdleOf& idle_of,
                                                    const HostLeftOf& host_left) {
  std::vector<Request> out;
  if (after_.count() <= 0 || state.capacity == 0) return out;
  const bool pressure = state.contended || state.used * 2 >= state.capacity;
  if (!pressure) return out;
  struct Candidate {
    Millis idle;
    ConnId conn;
    JobId job;
    uint64_t bytes;      // resident movable
    uint64_t staged;     // of which staged already
    uint64_t pool_free;  // pinned already, holding nothing: staging there pins nothing more
  };
  std::vector<Candidate> candidates;
  for (const MemoryLedger::ConnMemory& m : state.conns) {
    if (m.engine != static_cast<uint32_t>(proto::MemoryEngine::kSwap) || m.checkpointed ||
        m.suspended || asked_.count({m.conn, gpu}) != 0) {
      continue;
    }
    const uint64_t movable = m.resident > m.fixed ? m.resident - m.fixed : 0;
    if (movable < m.staged + kMinBytes) continue;
    std::optional<Millis> idle = idle_of(m.job);
    if (!idle || *idle < after_) continue;
    candidates.push_back({*idle, m.conn, m.job, movable, m.staged, m.pool_free});
  }
  // Requests under way: what their pools have yet to grow by.
  uint64_t reserved = 0;
  for (const MemoryLedger::ConnMemory& m : state.conns) {
    auto it = asked_.find({m.conn, gpu});
    if (it == asked_.end()) continue;
    const uint64_t needs = m.swapped + it->second.bytes;
    reserved += needs > m.pool ? needs - m.pool : 0;
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.idle > b.idle; });
  uint64_t planned = reserved;  // new pinned bytes of requests (counted against every budget)
  for (const Candidate& c : candidates) {
    const uint64_t left = host_left(c.job);
    const uint64_t room = left > planned ? left - planned : 0;
    // A request is the bytes to have staged in all: those staged already, and those that fit
    // in the free part of the process's pool, need no more pinned memory.
    const uint64_t fresh = std::min(c.bytes - c.staged, room + c.pool_free);
    if (fresh < kMinBytes) continue;
    out.push_back({c.conn, c.staged + fresh});
    planned += fresh > c.pool_free ? fresh - c.pool_free : 0;
    asked_[{c.conn, gpu}] = {c.job, c.staged + fresh};
  }
  return out;
}

void IdleStaging::Active(JobId job) {
  for (auto it = asked_.begin(); it != asked_.end();) {
    it = it->second.job == job ? asked_.erase(it) : std::next(it);
  }
}

void IdleStaging::Forget(ConnId conn) {
  for (auto it = asked_.begin(); it != asked_.end();) {
    it = it->first.first == conn ? asked_.erase(it) : std::next(it);
  }
}

}  // namespace gshare
