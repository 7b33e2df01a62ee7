// Daemon: gshare's arbiter process. Serves the Unix socket with one poll() loop: shim
// connections (lease requests, releases, memory reports), runner connections (`gshare run`
// and the supervisors of submitted jobs: registration, start, end) and one-shot CLI requests
// (status, submit, job control, clean, scheduler on/off, shutdown). Owns the Arbiter, the
// batch queue (daemon_queue.cc) and the JobStore. Single-threaded: everything below runs on the thread
// that called Run().
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "admission.h"
#include "arbiter.h"
#include "job_end.h"
#include "config.h"
#include "frame_io.h"
#include "job_store.h"
#include "status.h"

namespace gshare {

struct DaemonOptions {
  Config config;
  std::string socket_path;
  std::string lock_path;
  std::string database_path;
  std::string state_dir;  // job logs, end reports, scripts
  std::string self_exe;   // this binary, to start job supervisors
};

class Daemon {
 public:
  explicit Daemon(DaemonOptions options);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Takes the single-instance lock, binds the socket, opens the database and serves until
  // SIGTERM/SIGINT or a shutdown request. `ready_fd` (or -1) receives 'R' once serving, or
  // 'B' when another daemon holds the lock (then Run returns OK without serving).
  // Errors before serving are returned; after that, failures are logged and served past.
  Status Run(int ready_fd);

 private:
  struct Connection {
    enum class Kind { kUnknown, kShim, kRunner, kCli };
    int fd = -1;
    ConnId id = 0;
    Kind kind = Kind::kUnknown;
    pid_t pid = 0;  // SO_PEERCRED
    uid_t uid = 0;  // SO_PEERCRED
    FrameBuffer in{proto::kMaxRequestPayload};
    JobId job = 0;
    std::map<GpuKey, uint64_t> bytes;  // shim: device bytes held per GPU
  };
  struct ActiveJob {
    JobRecord record;
    bool ended = false;  // the runner reported the end (or vanished)
    bool adhoc = false;  // a preloaded process not started by `gshare run`
    // No runner connection (re-adopted after a daemon restart, or a supervisor not attached
    // yet): its runner's liveness is polled instead.
    bool orphan = false;
    bool readopted = false;  // running when this daemon started
    std::optional<TimePoint> kill_at;  // cancel/requeue: SIGKILL the group then
    std::set<ConnId> shims;
    uint64_t peak_bytes = 0;
  };

  Status Setup(int ready_fd, bool* busy);
  void Loop();
  void Accept();
  void OnReadable(ConnId id);
  void Drop(ConnId id, const std::string& why);
  void Dispatch(Connection& c, const Frame& f);
  void OnShimFrame(Connection& c, const Frame& f);
  void OnJsonFrame(Connection& c, const Frame& f);
  void Apply(const LeaseActions& actions);
  void Reply(Connection& c, const std::string& json);
  JobId AdoptProcess(Connection& c, uint64_t job_id);
  void FinishJob(JobId job, const std::string& state, std::optional<int> exit_code,
                 std::optional<int> signal, const std::string& reason);
  void ForgetJobIfDone(JobId job);
  std::string StatusJson(const nlohmann::json& request);

  // The batch queue (daemon_queue.cc).
  void LoadQueue();
  void OnRunRegister(Connection& c, const nlohmann::json& req);
  void OnSubmit(Connection& c, const nlohmann::json& req);
  void OnRunAttach(Connection& c, const nlohmann::json& req);
  void OnRunStarted(Connection& c, const nlohmann::json& req);
  void OnRunEnded(Connection& c, const nlohmann::json& req);
  void OnJobControl(Connection& c, const nlohmann::json& req);
  void OnClean(Connection& c, const nlohmann::json& req);
  // Checks the dependency list of a new job; an error names the first unknown job.
  Status CheckDependencies(const JobRecord& r);
  std::string StateOf(int64_t id);
  // Starts what admission allows and records the reasons of the rest.
  void Admission();
  void Activate(JobRecord record, const std::string& slot);
  Status SpawnSupervisor(JobRecord& record);
  std::map<std::string, int> RunningPerSlot() const;
  // Ends active job `id` as `end` reports, honouring a pending cancel or requeue.
  void EndJob(JobId id, const JobEnd& end);
  // Signals a running job's process group; false when its pid is not known yet.
  bool SignalJob(const ActiveJob& job, int sig);
  Status CancelJob(int64_t id, bool requeue);
  void QueueTick(TimePoint now);
  std::optional<TimePoint> QueueDeadline() const;
  // Writes `r` to the database; a failure is logged and returned.
  Status SaveRecord(const JobRecord& r);

  DaemonOptions options_;
  Arbiter arbiter_;
  std::unique_ptr<JobStore> store_;
  int listen_fd_ = -1;
  int lock_fd_ = -1;
  int signal_pipe_[2] = {-1, -1};
  bool stopping_ = false;
  ConnId next_conn_ = 1;
  std::map<ConnId, std::unique_ptr<Connection>> conns_;
  std::map<JobId, std::unique_ptr<ActiveJob>> jobs_;
  struct GpuInfo {
    proto::GpuUuid uuid;
    int ordinal;  // as the first shim that used the GPU numbered it (display only)
  };
  std::map<GpuKey, GpuInfo> gpus_;

  // The batch queue: pending jobs (submitted, and `gshare run` jobs waiting for admission).
  std::map<int64_t, JobRecord> pending_;
  std::map<int64_t, std::string> final_states_;  // for dependencies; final states never change
  bool queue_dirty_ = true;                      // Admission() runs after the next event
  std::optional<double> next_begin_;             // earliest --begin ahead (unix seconds)
  TimePoint next_orphan_check_{};
  int gpu_count_ = 1;
};

// Unix time in seconds (wall clock), as job records store it. Leases use CLOCK_MONOTONIC.
double WallNow();

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (nvidia-smi's spelling of a UUID).
GpuKey FormatGpuUuid(const proto::GpuUuid& uuid);

}  // namespace gshare
