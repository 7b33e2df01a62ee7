// Shared by the memory ledger's tests: sizes, GPU names, times and what a plan evicts.
// Test threads only.
#pragma once

#include <chrono>
#include <cstdint>

#include "policy/memory_ledger.h"

namespace gshare::ledger_test {

constexpr uint64_t kGiB = 1ull << 30;
inline const GpuKey kGpu = "GPU-0";
inline const GpuKey kOther = "GPU-1";
inline const TimePoint kT0 = TimePoint{} + std::chrono::hours(1);

inline TimePoint At(int ms) { return kT0 + Millis(ms); }

// Ledger options that count no context bytes per process.
inline MemoryLedger::Options NoContext() {
  MemoryLedger::Options o;
  o.context_bytes = 0;
  return o;
}

// A report in GiB: the GPU's size (0: not reported) and the process's memory on it.
inline proto::MemReportMsg Rep(uint64_t total, uint64_t allocated, uint64_t resident,
                               uint64_t fixed = 0, uint64_t demand = 0) {
  proto::MemReportMsg m{};
  m.total = total * kGiB;
  m.allocated = allocated * kGiB;
  m.resident = resident * kGiB;
  m.fixed = fixed * kGiB;
  m.demand = demand * kGiB;
  return m;
}

// A process's report on a GPU of 80 GiB, sizes in GiB.
inline proto::MemReportMsg Report80(uint64_t allocated, uint64_t resident, uint64_t demand = 0) {
  proto::MemReportMsg m{};
  m.total = 80 * kGiB;
  m.allocated = allocated * kGiB;
  m.resident = resident * kGiB;
  m.demand = demand * kGiB;
  return m;
}

// Bytes `plan` evicts from connection `conn`.
inline uint64_t EvictedFrom(const MemoryLedger::Plan& plan, ConnId conn) {
  uint64_t n = 0;
  for (const auto& e : plan.evictions) n += e.conn == conn ? e.bytes : 0;
  return n;
}

}  // namespace gshare::ledger_test
