// MpsServers: gshare's MPS backend on this machine (docs/design.md, "MPS backend"). One MPS
// control daemon per GPU, started by the daemon as it starts and stopped as it stops, each with
// pipe and log folders of its own (<state_dir>/mps/<GPU index>/{pipe,log}) and
// CUDA_VISIBLE_DEVICES naming its GPU, so that nothing of the machine's default MPS (/tmp/
// nvidia-mps) is touched and each GPU's server serves one user at a time without holding back
// the others. What a job placed on a GPU gets is decided by ChooseMps (policy/mps_choice.h);
// a client's environment names its GPU's pipe folder and its MPS priority and thread cap.
//
// The control program is run, never linked: `control -d` starts a control daemon (it forks
// to the background; its pid is in <pipe>/nvidia-cuda-mps-control.pid) and `echo quit |
// control` stops it and its server (NVIDIA's MPS documentation, "Starting and stopping").
// Start and Stop block for at most `timeout` per GPU and are called outside the event loop's
// turns (before serving, after stopping); EnvFor and Describe never block. Daemon thread only.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/config.h"
#include "model/job_record.h"
#include "policy/mps_choice.h"

namespace gshare {

class MpsServers {
 public:
  struct Options {
    Config::Mps config;
    std::string dir;      // where the GPUs' folders go: <state_dir>/mps
    bool system = false;  // the system daemon: folders every user's client may reach (0755)
    std::chrono::milliseconds timeout{10'000};
    // A control daemon left up at Stop for jobs still its clients is quit once they have ended,
    // by `self_exe mps-linger` (RunMpsLinger), unless a daemon holds `lock_path` (the
    // daemon's lock, one per database) by then: that daemon has kept the server. Empty: left
    // up until the next daemon's Stop. `runner_of(job)`: the pid whose exit ends the job (its
    // `gshare run` or supervisor); 0 when unknown.
    std::string self_exe;
    std::string lock_path;
    std::function<pid_t(int64_t)> runner_of;
    // The driver's CUDA version (NvmlCudaDriverVersion); resolves [mps] batch_cap = "auto"
    // (ResolveBatchCap). nullopt: unknown.
    std::optional<int> cuda_driver_version;
  };
  using Env = std::vector<std::pair<std::string, std::string>>;

  // `live(job)`: whether job `job` is still running (its clients may still use the server).
  MpsServers(Options options, std::function<bool(int64_t)> live)
      : options_(std::move(options)),
        live_(std::move(live)),
        batch_cap_(
            ResolveBatchCap(ParseBatchCap(options_.config.batch_cap).value_or(BatchCap::kAuto),
                            options_.cuda_driver_version)) {}
  MpsServers(const MpsServers&) = delete;
  MpsServers& operator=(const MpsServers&) = delete;
  ~MpsServers() { Stop(); }

  // One control daemon per entry of `gpus` (the GPU's UUID, or its index when NVML gave
  // none), in index order. A GPU whose daemon does not start runs its jobs outside MPS (logged
  // once); with [mps] mode "off", or no control program, none is started. A control daemon
  // that an earlier daemon left up in the same folder (for its jobs that still ran) is kept.
  void Start(const std::vector<std::string>& gpus);
  // Stops the control daemons that have no live client job (`quit`, then the pid waited for);
  // one that still serves jobs, or does not quit (a process outside gshare uses it), is left
  // up: a forced quit fails its clients' CUDA calls (CUDA_ERROR_MPS_RPC_FAILURE). One left up
  // for jobs gets an mps-linger process that quits it after them (Options). Idempotent.
  void Stop();

  // The environment of job `r` placed on `slot` (a GPU index, a UUID, or "" for the only GPU):
  // the MPS variables when it becomes a client there (then it counts as one until it is no
  // longer live), else nothing. `why_not` gets the reason it does not. With a control daemon
  // up, the daemon's log says which, and the client's priority and cap.
  Env EnvFor(const JobRecord& r, const std::string& slot, std::string* why_not = nullptr);
  // Job `job`'s place as a client, when EnvFor made it one and it lives: its server's GPU (a
  // UUID, or an index when NVML gave none), the server's other live clients' priorities by
  // job id, and whether a process of the job has joined already (MarkJoined).
  struct ClientPlace {
    std::string gpu;
    std::map<int64_t, int> others;
    bool joined = false;
  };
  std::optional<ClientPlace> PlaceOf(int64_t job);
  // A process of client job `job` joined its server at its first CUDA call, at `now`: the job's
  // later processes join too (the job is on the server from then on); one that waited for room
  // (WaitAtArrival) is logged with the time it waited. Nothing when it is no client.
  void MarkJoined(int64_t job, std::chrono::steady_clock::time_point now);
  // Job `job`'s process did not join its server at its first CUDA call (ChooseAtArrival): the
  // job is no client from now on (another user's jobs may have the server once the others
  // end) and is listed outside with `why`. Nothing when it is no client.
  void LeaveAtArrival(int64_t job, const std::string& why);
  // Client job `job`'s process found no room at its first CUDA call (ChooseAtArrival says
  // `why`) and waits there to join: the time it has waited so far, counted from the job's
  // first such answer at `now` (later calls keep the first). Describe lists it as arriving,
  // until MarkJoined or LeaveAtArrival. Zero when it is no client.
  std::chrono::steady_clock::duration WaitAtArrival(int64_t job,
                                                    std::chrono::steady_clock::time_point now,
                                                    const std::string& why);
  // Whether live job `job` is listed outside MPS (EnvFor, LeaveAtArrival).
  bool Outside(int64_t job);
  // {"gpus": [{"gpu", "up", "pid", "client_uid"?, "clients": [job ids]}], "outside": [{"job",
  // "why"}], "arriving": [{"job", "why"}]} for status --json: the servers, the live jobs EnvFor
  // placed outside MPS while a control daemon was up, with the reason (a user's "why is my job
  // not sharing"), and the clients waiting at their first CUDA call (WaitAtArrival).
  nlohmann::json Describe();
  bool AnyUp() const;

 private:
  struct Server {
    std::string gpu;  // UUID or index, as given to CUDA_VISIBLE_DEVICES
    std::string pipe, log;
    pid_t pid = 0;  // the control daemon's; 0: not running
    struct Client {
      uid_t uid = 0;
      int priority = 0;
      bool joined = false;  // a process of the job joined the server at its arrival (MarkJoined)
      // Since when, and why, a process of the job waits at its first CUDA call (WaitAtArrival).
      std::optional<std::chrono::steady_clock::time_point> waiting_since;
      std::string waiting_why;
    };
    std::map<int64_t, Client> clients;  // by job id
  };
  Server* ServerOf(const std::string& slot);
  void Prune(Server& s);
  void PruneOutside();  // forgets the jobs that ended (outside_ stays as long as the live jobs)
  bool StartOne(Server& s, const std::string& program);
  // Runs `program` with `args`, the server's MPS folders and GPU in its environment and `input`
  // on its stdin; true when it exited 0 within the timeout.
  bool RunControl(const Server& s, const std::string& program, const std::vector<std::string>& args,
                  const std::string& input);
  void StopOne(Server& s);
  // Starts `self_exe mps-linger` for `s`, detached; false when it could not.
  bool StartLinger(const Server& s, const std::vector<pid_t>& runners);

  Options options_;
  std::function<bool(int64_t)> live_;
  std::string program_;  // the control program found; "" when none
  BatchCap batch_cap_;   // [mps] batch_cap, resolved for this machine's driver
  std::vector<Server> servers_;
  std::map<int64_t, std::string> outside_;  // job id -> why it runs outside MPS (EnvFor)
};

// Runs `program` (nvidia-cuda-mps-control) with `args`, the MPS folders `pipe` and `log` and GPU
// `gpu` in its environment (nothing of the caller's CUDA_MPS_*, CUDA_VISIBLE_DEVICES or
// LD_PRELOAD) and `input` on its stdin; true when it exited 0 within `timeout`. Any thread; forks.
bool RunMpsControl(const std::string& program, const std::string& pipe, const std::string& log,
                   const std::string& gpu, const std::vector<std::string>& args,
                   const std::string& input, std::chrono::milliseconds timeout);

// `gshare mps-linger` (started by MpsServers::Stop): waits until none of `runners` is alive and
// then, unless a daemon holds `lock_path`, quits the control daemon of `pipe` (nothing when it
// is gone already). Polls every second; returns 0, or 1 when the quit failed.
struct MpsLingerOptions {
  std::string control, pipe, log, gpu, lock_path;
  std::vector<pid_t> runners;
};
int RunMpsLinger(const MpsLingerOptions& options);

}  // namespace gshare
