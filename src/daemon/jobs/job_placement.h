// JobPlacement: what admission and placement read of the jobs running now — jobs per GPU slot,
// per job array and per user, the device bytes the jobs hold per slot — and what a placed job is
// given: the CUDA_VISIBLE_DEVICES of its slots and, over several GPUs, a gang lease
// (Arbiter::SetGang). Reads the JobTable and the memory ledger; NVML's UUIDs come through an
// injected lookup. The daemon's event loop.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/gpu_inventory.h"
#include "ipc/replies.h"
#include "daemon/state/job_table.h"
#include "policy/arbiter.h"
#include "policy/memory_ledger.h"
#include "model/job_record.h"

namespace gshare {

class JobPlacement {
 public:
  struct Options {
    // GPUs of the machine (1 without NVML; known once the daemon started).
    std::function<int()> gpu_count = [] { return 1; };
    // The UUID of a --gpu entry (index or UUID), "" when NVML does not list it.
    std::function<std::string(const std::string&)> gpu_uuid_of = GpuUuidOf;
    // The MPS variables of a job placed on a GPU (MpsServers::EnvFor); none when unset.
    std::function<LaunchEnv(const JobRecord&, const std::string& gpu)> mps_env = nullptr;
  };
  // All but `options` outlive it.
  JobPlacement(Options options, const JobTable& table, const MemoryLedger& ledger, Arbiter& arbiter)
      : options_(std::move(options)), table_(table), ledger_(ledger), arbiter_(arbiter) {}

  // Jobs gshare started (not preloaded processes outside it) running or suspended now: per GPU
  // slot ("0"..), per job array (by array job id) and per user.
  std::map<std::string, int> RunningPerSlot() const;
  std::map<int64_t, int> RunningPerArray() const;
  std::map<uid_t, int> RunningPerUser() const;
  // Device bytes the active jobs hold on each slot, from the ledger; none with one GPU, and
  // none for a slot NVML does not name.
  std::map<std::string, uint64_t> AllocatedPerSlot() const;
  // CUDA_VISIBLE_DEVICES of a job that asked for `gpu` and was placed on `slot`; "" to leave the
  // variable alone (one GPU, none named).
  std::string VisibleDevicesOf(const std::string& gpu, const std::string& slot) const;
  // The further variables a job launched now on `slot` gets (LaunchEnv of ipc/replies.h): its
  // GPU's MPS server's when it becomes a client there. Counts it as one.
  LaunchEnv LaunchEnvOf(const JobRecord& record, const std::string& slot) const;
  // A job of several GPUs gets a gang lease on its slots, named by NVML's UUIDs; without a
  // UUID for each, its GPUs are leased one by one (logged).
  void SetGang(const JobRecord& record);
  // `ids` with each array job id replaced by its tasks that are pending (in `pending`, when
  // `on_pending`) or running or suspended (when `on_active`), in id order (scancel's rule); an
  // id that names no such task's array stays itself. No id twice.
  std::vector<int64_t> ExpandArrayIds(const std::vector<int64_t>& ids,
                                      const std::map<int64_t, JobRecord>& pending, bool on_pending,
                                      bool on_active) const;

 private:
  Options options_;
  const JobTable& table_;
  const MemoryLedger& ledger_;
  Arbiter& arbiter_;
};

}  // namespace gshare
