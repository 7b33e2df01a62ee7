// Recognizing a process again across a daemon restart: its pid plus its start time, so a
// reused pid is not mistaken for the job's supervisor. Reads /proc; any thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>

namespace gshare {

// Start time of process `pid` in clock ticks since boot (proc(5), /proc/PID/stat field 22),
// or nullopt when there is no such process (or it is a zombie).
std::optional<int64_t> ProcessStartTime(pid_t pid);

// The state letter of process `pid` (proc(5), /proc/PID/stat field 3: R, S, D, T, t, Z...),
// or nullopt when there is no such process.
std::optional<char> ProcessState(pid_t pid);

// True when `pid` runs and started at `start_ticks`.
bool SameProcessAlive(pid_t pid, int64_t start_ticks);

}  // namespace gshare
