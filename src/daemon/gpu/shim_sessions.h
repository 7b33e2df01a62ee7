// ShimSessions: a shim's connection from its hello to its close. The hello joins the active job
// whose token it shows (a process preloaded outside `gshare run` becomes a job of its own, one
// per process and a bounded number per user: ProcessJobs); lease requests and releases go to
// the Arbiter, memory reports to the ledger, gap reports to the stagger, and what they cause
// goes out through the LeaseOutbox. A `gshare run`'s memory query is answered from the ledger.
// Daemon thread only; a peer that breaks the protocol (a second hello, a lease message before
// it, a GPU it may not name: GpuGate) is dropped.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "daemon/gpu/gpu_gate.h"
#include "daemon/gpu/host_pools.h"
#include "daemon/gpu/idle_stager.h"
#include "daemon/gpu/lease_outbox.h"
#include "daemon/gpu/memory_coordinator.h"
#include "daemon/gpu/mps_servers.h"
#include "daemon/gpu/priority_lanes.h"
#include "daemon/gpu/process_jobs.h"
#include "daemon/gpu/sharing_controller.h"
#include "daemon/gpu/shim_messenger.h"
#include "daemon/gpu/stagger_coordinator.h"
#include "daemon/state/access_guard.h"
#include "daemon/state/connection.h"
#include "daemon/state/daemon_options.h"
#include "daemon/state/job_table.h"
#include "daemon/state/timeline_recorder.h"
#include "ipc/frame_io.h"
#include "policy/arbiter.h"
#include "policy/memory_ledger.h"
#include "store/job_store.h"

namespace gshare {

class ShimSessions {
 public:
  // The parts it reads and drives; all outlive it.
  struct Parts {
    const DaemonOptions& options;
    JobTable& table;
    JobStore& store;  // a process's own job is recorded here
    Arbiter& arbiter;
    MemoryLedger& ledger;
    MemoryCoordinator& memory;
    IdleStager& staging;
    TimelineRecorder& timeline;
    const Clock& clock;
    PriorityLanes& lanes;
    ShimMessenger& messenger;
    StaggerCoordinator& stagger;
    SharingController& sharing;
    LeaseOutbox& outbox;
    AccessGuard& access;  // who is an admin (not capped)
    GpuGate& gpus;        // which GPUs a peer may name
    HostPools& pools;     // each user's shared host pool
    MpsServers& mps;      // gshare's MPS servers: whether an arriving client joins
  };
  // What it asks of the parts above it: a job's end (JobLifecycle) and the checkpoint engine.
  class Host {
   public:
    // A job of a process's own lost its last shim: it ends COMPLETED.
    virtual void ProcessJobEnded(JobId job) = 0;
    // A process of the checkpoint engine reported: the helper starts unless it runs (cuInit
    // takes seconds, paid before the first eviction).
    virtual void StartCheckpointHelper() = 0;
    // Connection `conn` is gone: the checkpoint engine forgets it.
    virtual void ForgetCheckpoints(ConnId conn) = 0;

   protected:
    ~Host() = default;
  };
  // How it reaches the connections (the daemon's PeerTable).
  struct Transport {
    // Queues an encoded frame; false when the peer is gone or could not take it.
    std::function<bool(ConnId id, std::string_view frame)> send;
    // Closes the connection for `why`; it then comes back through Left.
    std::function<void(ConnId id, const std::string& why)> drop;
    // The peer's lease messages are never held back behind its own reports.
    std::function<void(ConnId id)> exempt;
    // Sends an encoded frame with descriptor `fd` (SCM_RIGHTS; the caller keeps its own);
    // false when it could not go out at once. Unset: no descriptor is ever sent.
    std::function<bool(ConnId id, std::string_view frame, int fd)> send_fd;
  };

  ShimSessions(Parts parts, Host& host, Transport transport)
      : p_(parts),
        host_(host),
        t_(std::move(transport)),
        process_jobs_(static_cast<size_t>(p_.options.config.limits.process_jobs_per_user)) {}

  // kHello, kLeaseRequest, kLeaseReleased, kMemReport or kGapReport of connection `c`.
  void OnFrame(Connection& c, const Frame& f);
  // kMemoryQuery: the job's view of the GPU (kMemoryView; unknown unless `c` may join the job).
  // The connection is then a CLI's: it joins no job and holds nothing.
  void OnMemoryQuery(Connection& c, const Frame& f);
  // kHostPoolQuery: the shared host pool of `c`'s uid (HostPools), sent as kHostPool with its
  // descriptor, when `c` may join the job it names and its uid has a shim connected (the pool
  // goes when the last one leaves); else kHostPool with bytes 0. Then a CLI's, as above.
  void OnHostPoolQuery(Connection& c, const Frame& f);
  // kMpsJoinQuery: whether the process of a job launched as an MPS client joins its server at
  // its first cuInit (kMpsJoin): not when a client of higher priority there left less than
  // [mps] join_free_percentage of the GPU's memory free (ChooseAtArrival): then "not yet"
  // (kMpsJoinWait, MpsServers::WaitAtArrival) until [mps] join_wait_seconds from the job's first
  // such answer, and after that outside, the job listed so. A job decides once, at its first
  // process's arrival: its later processes follow (outside, or on the server). Join for a job that
  // is no client, or that `c` may not join. Then a CLI's, as above.
  void OnMpsJoinQuery(Connection& c, const Frame& f);
  // Shim connection `c` is closing: its leases are reclaimed, its seat and ledger entry go (its
  // swap counters stay with its job), and a job of its own ends COMPLETED with its last shim.
  void Left(Connection& c);

 private:
  // Whether `c` may join active `job`: AccessGuard::ProvesJob with the hello's token bytes.
  bool MayJoin(const Connection& c, const ActiveJob& job, const uint8_t (&token)[16]) const;
  // A query on a connection of its own (kMemoryQuery, kHostPoolQuery, kMpsJoinQuery) comes as its
  // first frame: then the connection is a CLI's and true; else it is dropped ("`what` after its
  // hello") and false.
  bool FreshQuery(Connection& c, const char* what);
  // Whether `job_id` is active and `c` may join it with `token` (MayJoin).
  bool ProvesJob(const Connection& c, uint64_t job_id, const uint8_t (&token)[16]) const;
  // What ChooseAtArrival weighs for client `job` at `place`: the highest priority above the
  // job's among the server's other clients, and the GPU's capacity and free bytes by the ledger
  // (the server's GPU by its UUID, else the GPU a higher client has memory on; 0: unknown).
  MpsArrival ArrivalOf(const ActiveJob& job, const MpsServers::ClientPlace& place) const;
  // Shim connections of `uid` other than `except`.
  int ShimsOf(uid_t uid, ConnId except) const;
  void OnHello(Connection& c, const proto::HelloMsg& hello);
  // The job of a hello naming `job_id`: that active job, else the process's own (ProcessJobs:
  // the job of its first hello, or past its user's cap that user's newest), else a new one
  // (recorded RUNNING); 0 when the store refuses it.
  JobId AdoptProcess(Connection& c, uint64_t job_id);
  // Records the GPU `uuid` a message of `c` names, unless it may not name it (then `c` is
  // dropped and false returned).
  bool NoteGpu(Connection& c, const proto::GpuUuid& uuid, int ordinal);
  void OnLease(Connection& c, const GpuKey& gpu, proto::MsgType type, const proto::LeaseMsg& m);
  void OnMemReport(Connection& c, const GpuKey& gpu, const proto::MemReportMsg& m);

  TimePoint Now() const { return p_.clock.Now(); }

  Parts p_;
  Host& host_;
  Transport t_;
  ProcessJobs process_jobs_;
};

}  // namespace gshare
