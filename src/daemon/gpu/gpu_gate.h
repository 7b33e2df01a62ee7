// GpuGate: whether a shim may make the daemon track a GPU it does not track yet. The daemon
// keeps state for every GPU a shim names (the arbiter's, the ledger's, a `status` entry) for
// as long as it runs, so a peer that is not an admin may name only GPUs of this machine: those
// NVML lists, or, where NVML does not answer (no NVML library for the daemon; the fake
// driver's tests), at most as many new GPUs per user as the machine has ([queue] gpus, else
// /dev/nvidia<N>). Root and the admins may name any (up to JobTable::kMaxGpus). Not
// thread-safe: the daemon's event loop is its only caller.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "policy/types.h"

namespace gshare {

class GpuGate {
 public:
  struct Options {
    // The machine's GPU UUIDs ("GPU-..."), or nullopt when they cannot be listed
    // (base/gpu_inventory.h NvmlGpuUuids).
    std::function<const std::optional<std::vector<std::string>>&()> inventory;
    std::function<int()> gpu_count;  // the machine's GPUs (CountGpus)
  };

  explicit GpuGate(Options options) : options_(std::move(options)) {}

  // Ok when a peer of `uid` (`admin`: root or an admin) may have the daemon track `gpu`, which
  // it does not track yet; the error says why not. Added must follow once it is tracked.
  Status MayAdd(const GpuKey& gpu, uid_t uid, bool admin) const;
  // `gpu` is tracked now, first named by a peer of `uid`.
  void Added(uid_t uid) { ++added_[uid]; }

 private:
  Options options_;
  std::map<uid_t, int> added_;  // GPUs each user's peers were first to name
};

}  // namespace gshare
