// Size-bounded rotation of the daemon's log: the detached daemon's stderr is
// <state_dir>/daemon.log (daemon_launcher.h), and it must not grow without bound. Called from
// the daemon's thread only; the calls are a few syscalls, never blocking on a peer.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace gshare {

// When `fd` is the open file at `path` (same device and inode) and holds more than
// `max_bytes`, renames `path` to `path`.1 (replacing an older one), opens a new empty `path`
// (O_APPEND, mode 0600) and makes `fd` refer to it with dup2. Returns true when it rotated,
// false when there was nothing to do (`max_bytes` 0, `fd` not that file, the file small enough);
// an error when a rename or open failed (`fd` then still writes where it did).
Result<bool> RotateLogIfLarger(int fd, const std::string& path, uint64_t max_bytes);

}  // namespace gshare
