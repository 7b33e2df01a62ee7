// What the arbiter's unit tests share: a fixture with a fixed time origin and helpers that
// pick actions out of a LeaseActions list.
#pragma once

#include <chrono>

#include "policy/arbiter.h"

namespace gshare::arbiter_test {

using Kind = LeaseAction::Kind;
inline const GpuKey kGpu = "GPU-0";

struct Fixture {
  Arbiter::Options options;
  TimePoint t0 = TimePoint{} + std::chrono::hours(1);
  Fixture() {
    options.default_quantum = Millis(20000);
    options.drop_grace = Millis(10000);
  }
  TimePoint At(int ms) const { return t0 + Millis(ms); }
  // Jobs 1 and 2 of priority 0, default quantum, with one connection each: 11 (pid 100) and
  // 21 (pid 200).
  static void AddTwoJobs(Arbiter& arb) {
    arb.AddJob(1, 0, Millis(0), 0);
    arb.AddJob(2, 0, Millis(0), 0);
    arb.AddConn(11, 1, 100);
    arb.AddConn(21, 2, 200);
  }
};

// Actions of `kind` for `conn`.
inline int Count(const LeaseActions& a, Kind kind, ConnId conn) {
  int n = 0;
  for (const auto& x : a) n += (x.kind == kind && x.conn == conn);
  return n;
}

// The epoch of the first action of `kind` for `conn`, 0 when none.
inline uint64_t EpochOf(const LeaseActions& a, Kind kind, ConnId conn) {
  for (const auto& x : a) {
    if (x.kind == kind && x.conn == conn) return x.epoch;
  }
  return 0;
}

// Two GPUs for the gang tests.
inline const GpuKey kA = "GPU-A";
inline const GpuKey kB = "GPU-B";

// Job 1, a single job (connection 11), and job 2, a gang on A and B with one process on
// each (connections 21 and 22), all of priority 0.
inline void AddSingleAndGang(Arbiter& arb) {
  arb.AddJob(1, 0, Millis(0), 0);
  arb.AddJob(2, 0, Millis(0), 0);
  arb.SetGang(2, {kA, kB});
  arb.AddConn(11, 1, 100);
  arb.AddConn(21, 2, 200);
  arb.AddConn(22, 2, 201);
}

}  // namespace gshare::arbiter_test
