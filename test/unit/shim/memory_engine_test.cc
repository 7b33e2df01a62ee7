// Which memory engine runs for what was asked and what the driver can do (memory_engine.h).
#include "memory/memory_engine.h"

#include <doctest/doctest.h>

namespace gshare::shim::unit_memory_engine {
namespace {

using proto::MemoryEngine;

TEST_CASE("the engine asked for runs when the driver can run it, else none") {
  for (bool vmm : {false, true}) {
    for (bool managed : {false, true}) {
      CAPTURE(vmm);
      CAPTURE(managed);
      CHECK(RunnableEngine(MemoryEngine::kSwap, vmm, managed) ==
            (vmm ? MemoryEngine::kSwap : MemoryEngine::kOff));
      // Managed memory is prefetched and freed through the VMM table too.
      CHECK(RunnableEngine(MemoryEngine::kManaged, vmm, managed) ==
            (vmm && managed ? MemoryEngine::kManaged : MemoryEngine::kOff));
      // The daemon checkpoints the process whole: nothing of the driver is needed.
      CHECK(RunnableEngine(MemoryEngine::kCheckpoint, vmm, managed) == MemoryEngine::kCheckpoint);
      CHECK(RunnableEngine(MemoryEngine::kOff, vmm, managed) == MemoryEngine::kOff);
    }
  }
}

}  // namespace
}  // namespace gshare::shim::unit_memory_engine
