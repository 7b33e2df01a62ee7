// DaemonParts: the daemon's parts wired as they work together, built once its database is open:
// the Arbiter with the memory ledger and coordinator, sharing, staggering, idle staging and the
// checkpoint engine; the batch queue with its jobs' lifecycle, control, requests, Slurm steps,
// retention and status; the shim sessions and their LeaseOutbox. They reach peers only through
// PeerLinks, so tests build the same graph without sockets; the Daemon runs the loop and the
// sockets around it. It is the Host through which a part of a lower wing reaches one of a
// higher wing (CheckpointEngine::Host, LeaseOutbox::Checkpoints, ShimSessions::Host: docs/design.md
// "Map"). Daemon thread only.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/gpu_inventory.h"
#include "daemon/checkpoint/checkpoint_engine.h"
#include "daemon/checkpoint/checkpoint_helper.h"
#include "daemon/gpu/gpu_gate.h"
#include "daemon/gpu/idle_stager.h"
#include "daemon/gpu/lease_outbox.h"
#include "daemon/gpu/memory_coordinator.h"
#include "daemon/gpu/mps_servers.h"
#include "daemon/gpu/priority_lanes.h"
#include "daemon/gpu/sharing_controller.h"
#include "daemon/gpu/shim_messenger.h"
#include "daemon/gpu/shim_sessions.h"
#include "daemon/gpu/stagger_coordinator.h"
#include "daemon/jobs/batch_queue.h"
#include "daemon/jobs/job_control.h"
#include "daemon/jobs/job_lifecycle.h"
#include "daemon/jobs/job_placement.h"
#include "daemon/jobs/job_processes.h"
#include "daemon/jobs/job_requests.h"
#include "daemon/jobs/job_retention.h"
#include "daemon/jobs/slurm_steps.h"
#include "daemon/observe/status_reporter.h"
#include "daemon/state/access_guard.h"
#include "daemon/state/daemon_options.h"
#include "daemon/state/job_table.h"
#include "daemon/state/request_transport.h"
#include "daemon/state/timeline_recorder.h"
#include "policy/arbiter.h"
#include "policy/memory_ledger.h"
#include "store/job_store.h"

namespace gshare {

// How the parts reach the daemon's peers (its PeerTable).
struct PeerLinks {
  // Queues an encoded frame for connection `id`; false when it is gone, closing, or could not
  // take it (then it is dropped).
  std::function<bool(ConnId id, std::string_view frame)> send;
  // Closes connection `id` for `why` (logged); what it held is released at once.
  std::function<void(ConnId id, const std::string& why)> drop;
  // Connection `id` (a shim's) is read ahead of the peers' fair turns: its lease messages never
  // wait behind its own reports.
  std::function<void(ConnId id)> exempt;
  // Sends an encoded frame with descriptor `fd` (kept by the caller) to connection `id` at
  // once; false when it cannot go out now. Unset: descriptors are never sent.
  std::function<bool(ConnId id, std::string_view frame, int fd)> send_fd;
};

class DaemonParts final : private CheckpointEngine::Host,
                          private LeaseOutbox::Checkpoints,
                          private ShimSessions::Host {
 public:
  // `options` and `clock` outlive the parts; `store` is the open database.
  DaemonParts(const DaemonOptions& options, Clock& clock, std::unique_ptr<JobStore> store,
              PeerLinks links);
  DaemonParts(const DaemonParts&) = delete;
  DaemonParts& operator=(const DaemonParts&) = delete;

  const DaemonOptions& options;
  Clock& clock;
  const PeerLinks links;
  const std::unique_ptr<JobStore> store;
  int gpu_count = 1;      // the machine's GPUs (CountGpus), set before Recover
  double start_time = 0;  // unix seconds: when the daemon started serving
  // The GPUs' UUIDs as NVML lists them (NvmlGpuUuids), set with gpu_count; nullopt: unknown.
  std::optional<std::vector<std::string>> gpu_uuids;
  Arbiter arbiter;
  JobTable table;  // connections, active jobs, GPUs
  JobProcesses processes{options, table};
  MemoryLedger ledger;
  MpsServers mps{MpsServers::Options{.config = options.config.mps,
                                     .dir = MpsDir(options),
                                     .system = options.system,
                                     .self_exe = options.self_exe,
                                     .lock_path = options.lock_path,
                                     .runner_of = [this](int64_t id) { return RunnerOf(id); },
                                     .cuda_driver_version = NvmlCudaDriverVersion()},
                 [this](int64_t id) { return table.Running(id) != nullptr; }};
  JobPlacement placement{JobPlacement::Options{[this] { return gpu_count; }, GpuUuidOf,
                                               [this](const JobRecord& r, const std::string& gpu) {
                                                 return mps.EnvFor(r, gpu);
                                               }},
                         table, ledger, arbiter};
  PriorityLanes lanes;
  TimelineRecorder timeline{TimelineRecorder::Options{options.config.timeline.record}, clock,
                            [this](JobId job) { return table.OwnerOf(job); }};
  ShimMessenger messenger{ShimMessenger::Parts{table, arbiter, ledger, lanes, timeline},
                          links.send};
  StaggerCoordinator stagger{options.config.scheduler.stagger, arbiter, clock, messenger};
  LeaseOutbox outbox{
      LeaseOutbox::Parts{table, arbiter, memory, stagger, messenger, *this, timeline}, links.send};
  MemoryCoordinator memory{ledger, arbiter, stagger.stagger(), clock, outbox};
  SharingController sharing;
  IdleStager staging{options.config.memory.idle_stage_after, arbiter, ledger, clock, messenger};
  CheckpointHelper checkpoint;
  CheckpointEngine engine;
  BatchQueue queue{*store,
                   clock,
                   [this](int64_t id) { return table.ActiveState(id); },
                   options.state_dir + "/queue.paused",
                   [this](uid_t uid, const std::string& name, int64_t id) {
                     return table.ActiveNamed(uid, name, id);
                   },
                   options.state_dir + "/queue.parallel"};
  JobLifecycle lifecycle;
  AccessGuard access{[this](int64_t id) { return lifecycle.OwnerOf(id); }, RequesterOf};
  RequestTransport transport;
  JobControl control;
  JobRequests requests{lifecycle, access, [this] { return gpu_count; }, transport};
  SlurmSteps slurm;
  JobRetention retention;
  StatusReporter status;
  HostPools pools{ledger.options().host_budget_per_user, ledger.options().host_budget};
  GpuGate gpus{{[this]() -> const std::optional<std::vector<std::string>>& { return gpu_uuids; },
                [this] { return gpu_count; }}};
  ShimSessions shims{
      ShimSessions::Parts{options, table, *store, arbiter, ledger, memory, staging, timeline, clock,
                          lanes, messenger, stagger, sharing, outbox, access, gpus, pools, mps},
      *this, ShimSessions::Transport{links.send, links.drop, links.exempt, links.send_fd}};

 private:
  // Where the MPS folders go: beside the system daemon's socket, which every user reaches
  // (its state folder is root's alone); in a user's daemon's state folder.
  static std::string MpsDir(const DaemonOptions& options);
  // The pid whose exit ends running job `id` (its `gshare run` or its supervisor); 0: unknown.
  pid_t RunnerOf(int64_t id) const;
  // CheckpointEngine::Host: lease actions and evictions through the outbox, rows through the
  // lifecycle.
  void Apply(const LeaseActions& actions) override { outbox.Apply(actions); }
  void SendEvictions(const GpuKey& gpu, const MemoryLedger::Plan& plan) override {
    outbox.SendEvictions(gpu, plan);
  }
  void SendGrant(ConnId conn, const std::string& frame) override { links.send(conn, frame); }
  void KillProcess(pid_t pid) override;
  Status SaveRecord(const JobRecord& r) override { return lifecycle.Save(r); }
  Status NotInState(int64_t id, const std::string& wanted) override {
    return queue.NotInState(id, wanted);
  }
  void SignalJobProcesses(const ActiveJob& job, int sig) override { processes.SignalAll(job, sig); }
  // LeaseOutbox::Checkpoints: the engine and its helper.
  bool DeferGrant(const LeaseAction& a, const std::string& frame) override {
    return engine.DeferGrant(a, frame);
  }
  bool Checkpoint(ConnId conn, const std::string& why) override {
    return engine.Checkpoint(conn, why);
  }
  uint64_t LastCheckpointSent() const override { return checkpoint.last_sent(); }
  // ShimSessions::Host: the lifecycle and the engine.
  void ProcessJobEnded(JobId job) override {
    lifecycle.Finish(job, JobState::kCompleted, std::nullopt, std::nullopt, "");
  }
  void StartCheckpointHelper() override { engine.StartHelper(); }
  void ForgetCheckpoints(ConnId conn) override { engine.Forget(conn); }
};

}  // namespace gshare
