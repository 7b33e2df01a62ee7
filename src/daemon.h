// Daemon: gshare's arbiter process. Serves the Unix socket with one poll() loop: shim
// connections (lease requests, releases, memory reports), `gshare run` connections (job
// registration and end) and one-shot CLI requests (status, scheduler on/off, shutdown).
// Owns the Arbiter and the JobStore. Single-threaded: everything below runs on the thread
// that called Run().
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <set>
#include <string>

#include "arbiter.h"
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
  std::string StatusJson();

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
};

// Unix time in seconds (wall clock), as job records store it. Leases use CLOCK_MONOTONIC.
double WallNow();

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (nvidia-smi's spelling of a UUID).
GpuKey FormatGpuUuid(const proto::GpuUuid& uuid);

}  // namespace gshare
