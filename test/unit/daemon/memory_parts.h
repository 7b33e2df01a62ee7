// What the tests of the daemon's memory parts share: swap-engine reports on an 80 GiB GPU, and
// the arbiter, the ledger and the MemoryCoordinator wired as the daemon wires them (the arbiter
// asks the coordinator before a grant, the ledger asks the arbiter who holds and who is
// resident) on a manual clock, the coordinator's evictions going to a Host of the test's.
#pragma once

#include <cstdint>

#include "base/clock.h"
#include "daemon/gpu/memory_coordinator.h"
#include "policy/arbiter.h"
#include "policy/memory_ledger.h"
#include "policy/ledger_test_util.h"
#include "policy/stagger.h"

namespace gshare::unit_memory_parts {

using ledger_test::kGiB;
using ledger_test::kGpu;

// A swap-engine report on an 80 GiB GPU (ledger_test::Report80), sizes in GiB.
inline proto::MemReportMsg SwapReport(uint64_t allocated, uint64_t resident, uint64_t host = 0,
                                      uint64_t fixed = 0) {
  proto::MemReportMsg m = ledger_test::Report80(allocated, resident);
  m.engine = static_cast<uint32_t>(proto::MemoryEngine::kSwap);
  m.host_bytes = host * kGiB;
  m.fixed = fixed * kGiB;
  return m;
}

// Job j has connection j * 10 + 1 (pid j * 100). No context bytes; 20 s quanta.
template <class MemoryHost>
struct MemoryParts {
  ManualClock clock;
  Arbiter arbiter{
      Arbiter::Options{true, Millis(20000), Millis(10000),
                       [this](const GpuKey& gpu, JobId job) { return memory.CanGrant(gpu, job); }}};
  MemoryLedger ledger{
      MemoryLedger::Options{0,
                            0,
                            0,
                            [this](ConnId c) { return arbiter.ConnHolds(c); },
                            0,
                            {},
                            [this](JobId j) { return arbiter.PriorityOf(j); },
                            [this](const GpuKey& g, JobId j) { return arbiter.IsResident(g, j); }}};
  Stagger stagger;
  MemoryHost memory_host;
  MemoryCoordinator memory{ledger, arbiter, stagger, clock, memory_host};

  void AddJob(JobId job, int priority) {
    arbiter.AddJob(job, priority, Millis(0), 0);
    arbiter.AddConn(job * 10 + 1, job, static_cast<pid_t>(job * 100));
  }
  void Report(JobId job, uint64_t allocated, uint64_t resident, uint64_t host = 0,
              uint64_t fixed = 0) {
    ledger.Report(job * 10 + 1, job, kGpu, SwapReport(allocated, resident, host, fixed));
  }
};

}  // namespace gshare::unit_memory_parts
