// JobTable: what the daemon holds live — its peers' connections, the jobs that run or are
// suspended, the GPUs shims have named — and the lookups every part of the daemon makes on
// them. Plain containers and queries, no I/O; the daemon's event loop (one thread) is its only
// reader and writer.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "daemon/state/active_job.h"
#include "daemon/state/connection.h"
#include "gshare/protocol.h"
#include "policy/types.h"

namespace gshare {

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (nvidia-smi's spelling of a UUID).
GpuKey FormatGpuUuid(const proto::GpuUuid& uuid);

// "job <id>": how the daemon's messages and error replies name a job.
inline std::string JobName(int64_t id) { return "job " + std::to_string(id); }

class JobTable {
 public:
  struct GpuInfo {
    proto::GpuUuid uuid;
    int ordinal;  // as the first shim that used the GPU numbered it (display only; -1: none)
  };
  // GPUs (UUIDs: whole GPUs and MIG instances) one machine can show: 8 GPUs x 7 MIG instances
  // is 56; this leaves room for the largest hosts.
  static constexpr size_t kMaxGpus = 256;

  std::map<ConnId, std::unique_ptr<Connection>> conns;
  std::map<JobId, std::unique_ptr<ActiveJob>> jobs;  // active: running or suspended
  std::map<GpuKey, GpuInfo> gpus;

  // The connection if it exists and is not closing, else nullptr.
  Connection* Live(ConnId id) const;
  // The active job `id` if it has not ended, else nullptr.
  ActiveJob* Running(JobId id) const;
  // Records a GPU a shim names; false (nothing recorded) past kMaxGpus distinct GPUs, so that
  // made-up UUIDs cannot grow the daemon's per-GPU state without bound.
  bool NoteGpu(const GpuKey& gpu, const proto::GpuUuid& uuid, int ordinal);
  // Records `gpu` (nvidia-smi's spelling) as a GPU a job was moved onto; no shim numbered it.
  void NoteMovedTo(const GpuKey& gpu);
  bool KnowsGpu(const GpuKey& gpu) const { return gpus.count(gpu) != 0; }
  // The GPUs shims have named, in order.
  std::vector<GpuKey> GpuKeys() const;
  // The live shims' connections and their jobs.
  std::vector<std::pair<ConnId, JobId>> Shims() const;
  // The state of job `id` while it is active and not ended (BatchQueue::ActiveState).
  std::optional<JobState> ActiveState(int64_t id) const;
  // Whether a job of `uid` named `name`, other than `id`, is active and not ended (an ad hoc
  // process is no job of the queue): BatchQueue::ActiveNamed, for --dependency=singleton.
  bool ActiveNamed(uid_t uid, const std::string& name, int64_t id) const;
  // The owner of active job `job`; 0 (root) for a job that is not active.
  uid_t OwnerOf(JobId job) const;
  // The GPU a shim's message that names `named` is about: they differ after a move
  // (Connection::moved).
  static GpuKey RunsOn(const Connection& c, const GpuKey& named);
  // The UUID to name `gpu` with in a message to `c`'s shim. `gpu` must be known (KnowsGpu):
  // every GPU a lease names came from a shim's message or a move, which record it.
  proto::GpuUuid NamedBy(const Connection& c, const GpuKey& gpu) const;
};

}  // namespace gshare
