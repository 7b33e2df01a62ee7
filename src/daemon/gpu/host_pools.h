// HostPools: the host pool that each user's processes share for swapped-out and staged memory
// (kHostPoolQuery, gshare/protocol.h; docs/memory.md "Pinned host pool"). One memory file per
// uid (the asking process's SO_PEERCRED uid, never the job's owner: a root process's memory
// stays out of a user's pool), created at its first ask and sealed at its size: a header of
// proto::kHostPoolHeaderBytes and whole blocks of proto::kHostPoolBlockBytes up to the budget.
// Creating it costs no memory: the shims populate blocks as they need them. The daemon never
// maps it (a user's process could corrupt what it reads there). Forget closes the daemon's
// descriptor once the user has no shim left; the processes that still map the file keep its
// memory until they exit.
// Daemon thread only.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>

#include "base/unique_fd.h"

namespace gshare {

class HostPools {
 public:
  // One user's pool holds at most `per_user` bytes (host_budget_per_user) when that is set,
  // else `machine` (host_budget); both 0 (no limits): half the machine's RAM.
  HostPools(uint64_t per_user, uint64_t machine);
  // The pool of `uid` (the descriptor stays owned here), made now when it has none; -1 when
  // the file cannot be made (memfd_create or sealing refused; logged).
  int For(uid_t uid);
  // The size of every pool's file, in bytes.
  uint64_t FileBytes() const { return file_bytes_; }
  void Forget(uid_t uid) { pools_.erase(uid); }
  bool Has(uid_t uid) const { return pools_.count(uid) != 0; }

 private:
  uint64_t file_bytes_;
  std::map<uid_t, UniqueFd> pools_;
};

}  // namespace gshare
