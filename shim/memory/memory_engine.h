// The memory engine this process asked for (docs/memory.md, "Engines"): GSHARE_MEMORY = swap (the
// default, also when unset or empty), managed, checkpoint or off; any other value is off.
// Read once, on first use; any thread, lock-free after that. Whether the engine can actually
// run (the driver's VMM or managed-memory calls) is each engine's own On().
#pragma once

#include "gshare/protocol.h"

namespace gshare::shim {

proto::MemoryEngine RequestedMemoryEngine();

// `checkpoint`: the daemon checkpoints this whole process; the shim serves allocations with
// the driver as usual and reports them as movable.
inline bool CheckpointEngineOn() {
  return RequestedMemoryEngine() == proto::MemoryEngine::kCheckpoint;
}

}  // namespace gshare::shim
