// Daemon: gshare's arbiter process. Serves the Unix socket with one poll() loop: shim
// connections (lease requests, releases, memory reports), runner connections (`gshare run`
// and the supervisors of submitted jobs: registration, start, end) and one-shot CLI requests
// (status, submit, job control, clean, scheduler on/off, shutdown). Owns the Arbiter, the
// batch queue with its jobs' lifecycle (JobLifecycle) and the JobStore. Single-threaded:
// everything below runs on the thread that called Run().
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "daemon/access_guard.h"
#include "daemon/active_job.h"
#include "daemon/batch_queue.h"
#include "daemon/connection.h"
#include "daemon/requester.h"
#include "policy/access.h"
#include "policy/admission.h"
#include "policy/arbiter.h"
#include "daemon/checkpoint_engine.h"
#include "daemon/checkpoint_helper.h"
#include "daemon/stagger_coordinator.h"
#include "daemon/daemon_options.h"
#include "daemon/idle_stager.h"
#include "daemon/job_table.h"
#include "daemon/job_control.h"
#include "daemon/job_lifecycle.h"
#include "daemon/job_placement.h"
#include "daemon/job_requests.h"
#include "daemon/job_processes.h"
#include "daemon/job_retention.h"
#include "daemon/memory_coordinator.h"
#include "daemon/metrics_publisher.h"
#include "daemon/peer_table.h"
#include "daemon/priority_lanes.h"
#include "daemon/sharing_controller.h"
#include "daemon/shim_messenger.h"
#include "daemon/slurm_steps.h"
#include "daemon/status_reporter.h"
#include "ipc/job_end.h"
#include "base/config.h"
#include "base/config_stamp.h"
#include "base/gpu_metrics.h"
#include "ipc/frame_io.h"
#include "store/job_store.h"
#include "policy/memory_ledger.h"
#include "policy/rebalance.h"
#include "ipc/requests.h"
#include "runner/job_identity.h"
#include "policy/stagger.h"
#include "base/status.h"
#include "daemon/systemd_notify.h"
#include "daemon/timeline_recorder.h"

namespace gshare {

class Daemon : private PeerEvents,
               private CheckpointEngine::Host,
               private MemoryCoordinator::Host,
               private SharingController::Host {
 public:
  // `clock` (outlives the daemon) is what every lease, quantum and job time is read from.
  explicit Daemon(DaemonOptions options, Clock& clock = SystemClock());
  ~Daemon() override;
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Takes the single-instance locks (the database's, the socket's), binds the socket, opens the
  // database and serves until SIGTERM/SIGINT or a shutdown request. `ready_fd` (or -1)
  // receives 'R' once serving (and $NOTIFY_SOCKET READY=1), or 'B' when another daemon holds
  // a lock: then Run returns an error naming that daemon's pid and socket, and busy() is true.
  // Errors before serving are returned; after that, failures are logged and served past.
  Status Run(int ready_fd);
  bool busy() const { return busy_; }

 private:
  Status Setup(int ready_fd, bool* busy);
  void Loop();
  // PeerEvents: the PeerTable's peers become connections (this user's and root's only),
  // their frames are dispatched, their losses dropped, their erasure forgotten.
  bool OnAccepted(ConnId id, pid_t pid, uid_t uid) override;
  void OnFrame(ConnId id, const Frame& frame) override;
  void OnLost(ConnId id, const std::string& why) override;
  void OnReaped(ConnId id) override;
  // Marks the connection closing and releases what it held; safe to call again, and from
  // anything it triggers (the connection stays in conns_ until the PeerTable reaps it).
  void Drop(ConnId id, const std::string& why);
  // Queues `bytes` for the peer (PeerTable::Send). False when the peer is gone or closing, or
  // when it lets its output grow past its bound (it is dropped then).
  bool Send(Connection& c, std::string_view bytes);
  bool Send(ConnId id, std::string_view bytes);
  void Dispatch(Connection& c, const Frame& f);
  void OnShimFrame(Connection& c, const Frame& f);
  void OnJsonFrame(Connection& c, const Frame& f);
  // Sends the messages of lease actions (grants go through the memory coordinator).
  void Apply(const LeaseActions& actions) override;
  void Reply(Connection& c, const std::string& json);
  JobId AdoptProcess(Connection& c, uint64_t job_id);
  // Whether shim connection `c` may join active `job`: its owner's (or root's) process that
  // shows the job's token (base/job_token.h).
  bool MayJoin(const Connection& c, const ActiveJob& job, const uint8_t (&token)[16]) const;

  // Memory: the ledger, shared and exclusive mode, evictions, handoffs (daemon_memory.cc).
  void OnMemReport(Connection& c, const GpuKey& gpu, const proto::MemReportMsg& m);
  // kMemoryQuery: answers with the job's view of the GPU (kMemoryView). The connection is
  // then a CLI's: it joins no job and holds nothing, so its close undoes nothing.
  void OnMemoryQuery(Connection& c, const Frame& f);
  // SharingController::Host: whether a shim named `gpu`; the holder of an exclusive GPU pins
  // ahead of its first eviction (ShimMessenger).
  bool KnowsGpu(const GpuKey& gpu) const override { return table_.KnowsGpu(gpu); }
  void AskHolderToPin(const GpuKey& gpu) override { messenger_.AskHolderToPin(gpu); }
  // Sends a plan's evictions (EVICTs; checkpoints for the checkpoint engine) and counts them in
  // the ledger until the victims report (the memory coordinator's and the engine's Host).
  void SendEvictions(const GpuKey& gpu, const MemoryLedger::Plan& plan) override;
  uint64_t LastCheckpointSent() const override { return checkpoint_.last_sent(); }
  // SharingController::Host: the gap watch follows a switch of mode.
  void UpdateGapWatch(const GpuKey& gpu) override { stagger_.Update(gpu); }

  // CheckpointEngine::Host (SendEvictions and Apply serve the other parts too).
  Status NotInState(int64_t id, const std::string& wanted) override {
    return queue_->NotInState(id, wanted);
  }
  void SendGrant(ConnId conn, const std::string& frame) override { Send(conn, frame); }
  void SignalJobProcesses(const ActiveJob& job, int sig) override {
    processes_.SignalAll(job, sig);
  }
  void KillProcess(pid_t pid) override { kill(pid, SIGKILL); }
  Status SaveRecord(const JobRecord& r) override { return lifecycle_->Save(r); }

  TimePoint Now() const { return clock_.Now(); }
  double WallNow() const { return clock_.WallNow(); }

  DaemonOptions options_;
  Clock& clock_;
  Arbiter arbiter_;
  std::unique_ptr<JobStore> store_;
  std::optional<BatchQueue> queue_;  // once the store is open
  // How the request-answering parts reach their connections.
  RequestTransport transport_{
      [this](Connection& c, const std::string& json_text) { Reply(c, json_text); },
      [this](ConnId id, const std::string& why) { Drop(id, why); }};
  std::optional<JobLifecycle> lifecycle_;  // once the queue is
  std::optional<JobControl> control_;      // once the queue is
  std::optional<JobRequests> requests_;    // once the queue is
  std::optional<SlurmSteps> slurm_;        // once the queue is
  std::optional<JobRetention> retention_;  // once the queue is
  std::optional<StatusReporter> status_;   // once the queue is
  AccessGuard access_{[this](int64_t id) { return lifecycle_->OwnerOf(id); }, RequesterOf};
  int listen_fd_ = -1;
  PeerTable peers_{this, PeerTable::Limits{}, proto::kMaxRequestPayload};
  int lock_fd_ = -1;
  int socket_lock_fd_ = -1;
  bool busy_ = false;
  SystemdNotify notify_;
  int signal_pipe_[2] = {-1, -1};
  bool stopping_ = false;
  JobTable table_;  // connections, active jobs, GPUs
  JobProcesses processes_{options_, table_};
  MemoryLedger ledger_;
  JobPlacement placement_{JobPlacement::Options{[this] { return gpu_count_; }}, table_, ledger_,
                          arbiter_};
  PriorityLanes lanes_;
  TimelineRecorder timeline_{TimelineRecorder::Options{options_.config.timeline.record}, clock_,
                             [this](JobId job) { return table_.OwnerOf(job); }};
  ShimMessenger messenger_{
      ShimMessenger::Parts{table_, arbiter_, ledger_, lanes_, timeline_},
      [this](ConnId conn, std::string_view frame) { return Send(conn, frame); }};
  StaggerCoordinator stagger_{options_.config.scheduler.stagger, arbiter_, clock_, messenger_};
  MemoryCoordinator memory_{ledger_, arbiter_, stagger_.stagger(), clock_, *this};
  SharingController sharing_{SharingController::Options{options_.config.scheduler.sharing == "auto",
                                                        [this] { return lanes_.on(); }},
                             arbiter_,
                             ledger_,
                             memory_,
                             clock_,
                             *this};
  IdleStager staging_{options_.config.memory.idle_stage_after, arbiter_, ledger_, clock_,
                      messenger_};
  CheckpointHelper checkpoint_;
  CheckpointEngine engine_{
      CheckpointEngine::Options{
          options_.config.scheduler.drop_grace, options_.config.scheduler.rebalance,
          options_.config.scheduler.sharing == "auto", [this] { return gpu_count_; },
          [this] { checkpoint_.EnsureStarted(options_.self_exe); }},
      CheckpointEngine::Parts{table_, arbiter_, ledger_, memory_, sharing_, lanes_, timeline_,
                              checkpoint_, clock_},
      *this};

  double start_time_ = 0;  // unix seconds: when this daemon started (metrics count from then)
  MetricsPublisher metrics_{options_.config.metrics, [this] { return status_->MetricsText(); }};
  int gpu_count_ = 1;
};

}  // namespace gshare
