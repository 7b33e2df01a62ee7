// The daemon's vocabulary of ids and times, shared by the policy and the daemon that drives it.
// Plain types and one pure function: any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace gshare {

using ConnId = uint64_t;     // one peer connection of the daemon, never reused while it runs
using JobId = uint64_t;      // a job's id, as the job store numbers it
using GpuKey = std::string;  // "GPU-<uuid>" as the shim reports it
// Leases, quanta, deadlines: CLOCK_MONOTONIC (steady_clock), never the wall clock.
using TimePoint = std::chrono::steady_clock::time_point;
using Millis = std::chrono::milliseconds;

// Seconds from `from` to `to`.
inline double Seconds(TimePoint from, TimePoint to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace gshare
