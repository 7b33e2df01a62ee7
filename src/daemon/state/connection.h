// Connection: the daemon's record of one peer of its socket (a shim, a runner, a CLI): who it
// is (SO_PEERCRED), what it holds and what it was asked. Plain data; the daemon's event loop
// (one thread) is its only reader and writer.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>

#include "daemon/state/requester.h"
#include "policy/types.h"

namespace gshare {

// One peer's session: who it is and what it holds. Its bytes are the PeerTable's. Its life
// ends in exactly one place: Drop() marks it closing (and closes its peer) and undoes what
// it owned (lease, memory, job); the PeerTable's Reap erases it (OnReaped) after the event
// that dropped it. A closing connection is never read, written or dispatched again.
struct Connection {
  enum class Kind { kUnknown, kShim, kRunner, kCli };
  ConnId id = 0;
  Kind kind = Kind::kUnknown;
  pid_t pid = 0;  // SO_PEERCRED
  uid_t uid = 0;  // SO_PEERCRED
  bool closing = false;
  JobId job = 0;
  std::map<GpuKey, uint64_t> prepared;  // shim: host bytes it was asked to pin, per GPU
  // shim: a GPU it names -> the GPU its process runs on since a move (MoveJob).
  std::map<GpuKey, GpuKey> moved;
  bool exiting = false;  // shim: released with kExit (its process exits; never checkpointed)
  std::optional<Requester> requester;  // its uid's groups, once a request needed them
};

}  // namespace gshare
