// Recognizing a process again across a daemon restart: its pid plus its start time, so a
// reused pid is not mistaken for the job's supervisor. Reads /proc; any thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gshare {

// The whole of a small /proc file (stat, status, cmdline: at most 1 MiB read), or "" when it
// cannot be read. Never throws: a process that exits while it is read (ESRCH) is no error, where
// a std::ifstream's buffer would throw.
std::string ReadProcFile(const std::string& path);

// What process `pid` runs: its arguments (/proc/PID/cmdline split at its NULs) and its working
// directory (/proc/PID/cwd). Empty fields where they cannot be read (a process that is gone, or
// another user's cwd).
struct ProcessCommand {
  std::vector<std::string> argv;
  std::string cwd;
};
ProcessCommand ReadProcessCommand(pid_t pid);

// The fields of /proc/PID/stat (proc(5)) gshare reads: the state letter (field 3: R, S, D, T,
// t, Z...), the parent's pid (field 4), its process group (field 5) and the start time (field
// 22, clock ticks since boot).
struct ProcessStat {
  char state = '?';
  pid_t ppid = 0;
  pid_t pgrp = 0;
  int64_t start_ticks = 0;
};

// Process `pid`'s stat fields under `proc_root` ("/proc" but for tests), or nullopt when there
// is no such process or its stat does not parse.
std::optional<ProcessStat> ReadProcessStat(pid_t pid, const std::string& proc_root = "/proc");

// Start time of process `pid` in clock ticks since boot (proc(5), /proc/PID/stat field 22),
// or nullopt when there is no such process (or it is a zombie).
std::optional<int64_t> ProcessStartTime(pid_t pid);

// The state letter of process `pid` (proc(5), /proc/PID/stat field 3: R, S, D, T, t, Z...),
// or nullopt when there is no such process.
std::optional<char> ProcessState(pid_t pid);

// True when `pid` runs and started at `start_ticks`.
bool SameProcessAlive(pid_t pid, int64_t start_ticks);

// The child of `parent` that leads its own process group (as JobRunner's job does), found by
// reading every /proc/PID/stat under `proc_root`; nullopt when there is none. The lowest pid
// when there are several.
std::optional<pid_t> GroupLeaderChild(pid_t parent, const std::string& proc_root = "/proc");

}  // namespace gshare
