// The live daemon's record, <state_dir>/daemon.json: its pid and socket, written by the daemon
// once it listens (0600, replaced atomically) so that a client whose rules give another socket
// path still finds the one daemon of its database (issue 19). Any thread; no state.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "base/status.h"

namespace gshare {

struct DaemonRecord {
  pid_t pid = 0;
  std::string socket;
};

// <state_dir>/daemon.json.
std::string DaemonRecordPath(const std::string& state_dir);

// Writes `record` to `path` through a temporary file and rename(2), mode 0600. Errors name
// the path.
Status WriteDaemonRecord(const std::string& path, const DaemonRecord& record);

// The record at `path` when it exists, is a regular file (not followed through a symbolic
// link) owned by this user or root and writable by nobody else, parses, and names a process
// that is alive; else nullopt. The socket it names still has to be checked before use.
std::optional<DaemonRecord> ReadDaemonRecord(const std::string& path);

// Removes the record at `path` when it names process `pid` (a daemon leaving cleans up only
// after itself).
void RemoveDaemonRecord(const std::string& path, pid_t pid);

}  // namespace gshare
