// gshare's settings: built-in defaults overlaid key by key with gshare.toml files
// (system, user, explicit --config). Loading reads the environment and the file system, so
// call LoadConfig/DefaultConfigSources/StateDir from the main thread before other threads
// start; a loaded Config is a plain value, readable from any thread.
#pragma once

#include <array>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/memory_engine.h"
#include "base/status.h"

namespace gshare {

// Job priorities (the default one here and each job's own) lie in [kMinPriority, kMaxPriority].
inline constexpr int kMinPriority = -1000;
inline constexpr int kMaxPriority = 1000;

// Bounds of the keys whose values past them would stall or flood the arbiter (docs/cli.md
// "Config bounds"); LoadConfig refuses a value outside, naming the key, file and range.
// [queue] gpus: the shim tracks at most 64 devices (shim/driver/context_registry.h).
inline constexpr int kMaxQueueGpus = 64;
// [queue] max_running, per GPU: each job holds a CUDA context (0.5-0.85 GiB measured), so a
// 141 GB GPU holds a few hundred; more is a typo.
inline constexpr int kMaxRunningPerGpu = 1000;
// [queue] max_running_per_user and [retention] max_ended_jobs.
inline constexpr int kMaxJobCount = 1'000'000;
// [scheduler] idle_release: below the shim's 20 ms tick it means nothing (every pause would
// give the lease away); over a day it never happens.
inline constexpr std::chrono::milliseconds kMinIdleRelease{20};
inline constexpr std::chrono::milliseconds kMaxIdleRelease{24LL * 3600 * 1000};
// [scheduler] drop_grace: a release drains and syncs the GPU work in flight (milliseconds
// to seconds); under 100 ms holders would be stopped mid-release, over a day never.
inline constexpr std::chrono::milliseconds kMinDropGrace{100};
inline constexpr std::chrono::milliseconds kMaxDropGrace{24LL * 3600 * 1000};

// Every key of gshare.toml; configs/gshare.toml documents each one.
struct Config {
  struct Scheduler {
    bool enabled = true;                          // [scheduler] enabled
    std::chrono::milliseconds quantum{20'000};    // time quantum of an exclusive lease (> 0)
    std::chrono::milliseconds idle_release{500};  // a holder idle this long gives the lease back
    // A holder with a waiting job gives the lease back at the start of an idle gap that it
    // expects to outlast both handoffs (shim/lease/gap_predictor.h).
    bool early_release = true;
    // Shared mode: jobs whose idle gaps coincide (lock step) are moved apart by stretching
    // one job's next gap (src/policy/stagger.h).
    bool stagger = true;
    // A checkpointed process of a job that sees every GPU, waiting for its GPU while another
    // job holds it, is restored onto an idle GPU of the same kind instead (src/policy/rebalance.h).
    bool rebalance = true;
    std::chrono::milliseconds drop_grace{10'000};  // DROP acknowledgement deadline, then SIGSTOP
    int default_priority = 0;                      // of jobs that give none
    // "auto": jobs that fit in a GPU's memory together run at once (shared mode), else one
    // at a time; "exclusive": always one at a time.
    std::string sharing = "auto";
  };
  struct Daemon {
    std::string socket;              // empty: the default rule of include/gshare/paths.h
    std::string state_dir;           // empty: see StateDir()
    std::string log_level = "info";  // trace, debug, info, warn, error, critical or off
  };
  // The system daemon (`gshare daemon --system`, docs/design.md "The system daemon"): its own
  // paths, apart from [daemon]'s, because /etc/gshare/gshare.toml is also every user's first
  // config layer and [daemon] there would move every per-user daemon too. Clients read
  // [system] socket to find the system daemon.
  struct System {
    std::string socket;        // empty: paths::kSystemSocket (/run/gshare/gshare.sock)
    std::string state_dir;     // empty: kSystemStateDir (/var/lib/gshare)
    std::string socket_group;  // empty: every user may connect (0666); else 0660 root:group
    // Members of this group may steer every job, stop the daemon and switch the scheduler, as
    // root may (docs/design.md "Who may do what"). Empty: root only.
    std::string admin_group;
    // The highest priority a user who is not an admin may give a job, unless
    // priority_ceiling names them or a group of theirs.
    int max_priority = 100;
    // [system.priority_ceiling]: "user" or "@group" -> that user's or group's ceiling; a user
    // gets the highest of the entries that match them, else max_priority.
    std::map<std::string, int> priority_ceiling;
  };
  struct Queue {
    int max_running = 2;  // [queue] max_running: submitted jobs per GPU, 1..kMaxRunningPerGpu
    int gpus = 0;  // [queue] gpus: GPUs to place jobs on, 0..kMaxQueueGpus; 0: count /dev/nvidia<N>
    // [queue] max_running_per_user: submitted jobs one user runs at once; 0: no limit
    int max_running_per_user = 0;
  };
  struct Memory {
    std::string engine = "swap";              // [memory] engine: default of `--memory`
    std::string host_budget = "50%";          // host RAM for swapped-out data: a size or % of RAM
    std::string host_budget_per_user;         // the same for one user's jobs; empty: no limit
    uint64_t gpu_limit = 0;                   // bytes jobs may use per GPU together; 0: all of it
    uint64_t context_reserve = 768ull << 20;  // device bytes counted per process for its context
    // A process idle on a GPU this long has its memory there staged (copied to host memory,
    // left on the GPU) when the GPU is, or may soon be, short of room; 0: never
    // (docs/memory.md, "Idle memory is staged").
    std::chrono::milliseconds idle_stage_after{5'000};
  };
  // What the daemon removes by itself, as `gshare clean` would (docs/cli.md "Retention").
  struct Retention {
    // Ended jobs (rows, gshare's own logs of them, their scripts) are removed this long after
    // they end; 0: kept until `gshare clean`.
    std::chrono::milliseconds ended_jobs{30LL * 24 * 3600 * 1000};
    int max_ended_jobs = 10'000;  // at most this many ended jobs kept, the last to end; 0: no cap
    uint64_t daemon_log_size = 16ull << 20;  // <state_dir>/daemon.log rotated past it; 0: never
  };
  // Prometheus metrics (docs/cli.md "Metrics"): off unless listen or textfile is set.
  struct Metrics {
    // "HOST:PORT" of the daemon's HTTP endpoint (GET /metrics); loopback only unless
    // allow_remote (base/listen_address.h). "": none.
    std::string listen;
    bool allow_remote = false;
    // A file for node_exporter's textfile collector, replaced (temp file + rename) every
    // textfile_interval. "": none.
    std::string textfile;
    std::chrono::milliseconds textfile_interval{15000};
  };
  // The GPU timeline the daemon records (`gshare timeline`, docs/cli.md "Timeline").
  struct Timeline {
    bool record = true;  // [timeline] record: lease grants, drops, swaps, checkpoints
    // Events are removed this long after they happened; 0: no age limit.
    std::chrono::milliseconds keep{7LL * 24 * 3600 * 1000};
    int64_t max_events = 1'000'000;  // at most this many kept, the newest; 0: no cap
  };
  // What runs when a job ends (pueue's callback; docs/cli.md "Notifications").
  struct Notify {
    // Run with /bin/sh -c as the job's owner, detached, with the job's fields in GSHARE_JOB_*
    // variables (daemon/jobs/job_end_hook.h); "": nothing runs.
    std::string command;
  };
  // Jobs that Slurm starts (`gshare slurm`, docs/slurm.md): their gshare priority comes from
  // their Slurm QOS when qos_priority names it, else from their partition when
  // partition_priority names it, else default_priority. Each within the priority range.
  struct Slurm {
    std::map<std::string, int> qos_priority;        // [slurm.qos_priority] "qos" = priority
    std::map<std::string, int> partition_priority;  // [slurm.partition_priority]
    int default_priority = 0;
    // The rule above for a job of this QOS and partition (either may be "").
    int PriorityOf(const std::string& qos, const std::string& partition) const;
  };
  // What one user may hold of the system daemon (docs/cli.md "Limits"): every user reaches it,
  // and any of them may be hostile. Root and the admins ([system] admin_group) are not capped.
  struct Limits {
    // Connections one user holds open at once; more are closed as they come. 0: no cap.
    int connections_per_user = 256;
    // Live jobs of processes one user preloads outside `gshare run` (one job per process); a
    // process past it joins the user's newest such job. 0: no cap.
    int process_jobs_per_user = 64;
  };
  // gshare's MPS backend (docs/design.md, "MPS backend"): the daemon starts one MPS control
  // daemon per GPU (`control -d`, pipe and log folders of its own under its state folder) and
  // makes the jobs that may share a server its clients, so that jobs sharing a GPU run with
  // MPS's concurrency instead of the driver's time-slicing.
  struct Mps {
    // "auto": control daemons are started when `control` is found and jobs that may share a
    // server become its clients; "off": no MPS (the driver time-slices the jobs' contexts).
    std::string mode = "auto";
    std::string control = "nvidia-cuda-mps-control";  // a path, or a name looked up in PATH
    // Jobs at or below this priority are batch work: MPS client priority below normal
    // (CUDA_MPS_CLIENT_PRIORITY=1, NVIDIA's MPS documentation), for the job's life. Jobs above
    // it are normal-priority clients without a cap.
    int batch_max_priority = 0;
    // The cap batch_cap holds a batch job to: that percentage of the GPU's threads
    // (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE; 100: no cap), for the job's life.
    int batch_thread_percentage = 25;  // 1..100
    // "auto": "never" where the driver has green contexts (CUDA >= 12.4), else
    // "beside_service"; "never" (no cap: the shim's SM partition keeps SMs free for a busy
    // service); "beside_service": a batch job that starts while a client above it runs on its
    // GPU; "always": every batch client. policy/mps_choice.h (BatchCap) has the rule and why.
    std::string batch_cap = "auto";
    // A job launched as a client whose process makes its first CUDA call while a client of
    // higher priority lives on the GPU's server and less than this percentage of the GPU's
    // memory is free runs outside MPS instead (policy/mps_choice.h, ChooseAtArrival); 0: off.
    int join_free_percentage = 15;  // 0..100
    // Such a job first waits at that first CUDA call (no context yet, so nothing of it reaches
    // the GPU) for up to this many seconds for the percentage to come free, or the higher
    // client to end, and then joins; only when it has not come runs it outside (ChooseAtArrival,
    // docs/design.md "Arrival"). 0: it runs outside at once.
    int join_wait_seconds = 60;  // 0..86400
  };
  Scheduler scheduler;
  Metrics metrics;
  Daemon daemon;
  System system;
  Queue queue;
  Memory memory;
  Retention retention;
  Notify notify;
  Timeline timeline;
  Slurm slurm;
  Limits limits;
  Mps mps;
};

// One config file and whether its absence is an error.
struct ConfigSource {
  std::string path;
  bool required = false;
};

// Config files in precedence order, lowest first: a later file overrides an earlier one key by key.
struct ConfigSources {
  std::vector<ConfigSource> files;
};

// The usual sources: /etc/gshare/gshare.toml, then $XDG_CONFIG_HOME/gshare/gshare.toml (when
// XDG_CONFIG_HOME is an absolute path, else $HOME/.config/gshare/gshare.toml; skipped with no
// home), then `explicit_path` (required) when given. Reads the environment.
ConfigSources DefaultConfigSources(std::optional<std::string> explicit_path);

// The system daemon's sources: `explicit_path` (required) when given, else
// /etc/gshare/gshare.toml (optional). No user's file: root's own settings are not the machine's.
ConfigSources SystemConfigSources(std::optional<std::string> explicit_path);

// The system daemon's state directory when [system] state_dir is empty.
inline constexpr const char* kSystemStateDir = "/var/lib/gshare";
// Where the system daemon listens: [system] socket, else paths::kSystemSocket.
std::string SystemSocket(const Config& config);
// Where clients look for the system daemon: $GSHARE_SYSTEM_SOCKET when set (the shim reads no
// config; tests), else SystemSocket(config). Reads the environment.
std::string ClientSystemSocket(const Config& config);
// [system] state_dir, else kSystemStateDir.
std::string SystemStateDir(const Config& config);

// Defaults overlaid with each file of `sources` in order. A missing optional file is skipped.
// Errors (a missing required file, unreadable file, TOML syntax error, unknown table or key,
// wrong type, bad duration, a value out of its range, unknown log level) name the file and, where
// the problem has one, "path:line:col: ...". Never throws.
Result<Config> LoadConfig(const ConfigSources& sources);

// The daemon's state directory (database, logs): config.daemon.state_dir when set (a leading
// "~/" means $HOME), else $GSHARE_STATE_DIR, else $XDG_STATE_HOME/gshare (when absolute),
// else $HOME/.local/state/gshare (the home from the password database when HOME is unset).
// Does not create it. Reads the environment.
std::string StateDir(const Config& config);

}  // namespace gshare
