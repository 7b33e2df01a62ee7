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

// Bytes `plan` evicts from connection `conn`.
inline uint64_t EvictedFrom(const MemoryLedger::Plan& plan, ConnId conn) {
  uint64_t n = 0;
  for (const auto& e : plan.evictions) n += e.conn == conn ? e.bytes : 0;
  return n;
}

}  // namespace gshare::ledger_test
