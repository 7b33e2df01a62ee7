// The daemon's JSON requests (include/gshare/protocol.h kRunStarted .. kRunAttach) as typed
// structs shared by both sides: the client builds the struct and sends ToJson(); the daemon
// reads it from untrusted JSON with Parse, in one place, checking every field's type and
// range before it acts on it. Parse never throws; its error is one line, sent back to the
// peer as the request's error reply. Parse(ToJson()) gives back what was sent. Any thread.
// (The job options of kRunRegister and kSubmit are ipc/job_json.h's JobOptions JSON.)
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ipc/job_end.h"
#include "ipc/json_fields.h"
#include "model/job_record.h"
#include "base/status.h"

namespace gshare {

// Job ids are SQLite rowids: positive.
// The longest job name an update sets (bytes).
inline constexpr size_t kMaxUpdateName = 256;
inline constexpr int64_t kMaxJobId = INT64_MAX;
// The most job ids one kJobControl request names: the daemon answers each request whole while
// every other client waits, and its reply has one result per id. The CLI sends a longer list in
// several requests.
inline constexpr size_t kMaxControlIds = 10'000;

// kJobControl: {"action", "ids": [...], "priority"?, "signal"?, "gpu"?, and for "update" any of
// "name", "time_limit_ms", "dependency", "begin_time"}
struct JobControlRequest {
  std::string action;  // cancel requeue hold release suspend resume set-priority signal
  // At most kMaxControlIds, with exact_ids. An array's id stands for its tasks (JobControl).
  std::vector<int64_t> ids;
  int priority = 0;   // set-priority: within [kMinPriority, kMaxPriority]
  int signal = 0;     // signal: within [1, NSIG)
  std::string gpu{};  // resume: the GPU (index or UUID) to restore the job onto; "": its own
  // update (pending jobs, as `scontrol update`): the fields to change; absent ones stay.
  struct Update {
    std::optional<std::string> name;        // 1..kMaxUpdateName bytes
    std::optional<int64_t> time_limit_ms;   // >= 0; 0: no limit
    std::optional<std::string> dependency;  // dependency.h's canonical text; "": none
    std::optional<double> begin_time;       // unix seconds; 0: start as soon as possible
    bool operator==(const Update&) const = default;
  } update{};
  // Ids that stand for their own job only, never for an array's tasks (though the first
  // task's id is its array's): array tasks named as J_T, the row `top` acts on.
  std::vector<int64_t> exact_ids{};
  nlohmann::json ToJson() const;
  static Result<JobControlRequest> Parse(const nlohmann::json& j);
};

// kClean: {"older_than_ms"?} (default 0: every ended job)
struct CleanRequest {
  int64_t older_than_ms = 0;  // >= 0
  nlohmann::json ToJson() const;
  static Result<CleanRequest> Parse(const nlohmann::json& j);
};

// kRunStarted: {"job_id", "pid"}
struct RunStartedRequest {
  int64_t job_id = 0;
  pid_t pid = 0;  // > 1
  nlohmann::json ToJson() const;
  static Result<RunStartedRequest> Parse(const nlohmann::json& j);
};

// kRunEnded: {"job_id", "exit_code", "signal", "timed_out", "error"?, "end_time"?, "token"?}
// (JobEndToJson's shape: the same object is a job's end file). `token` (the job's, hex) proves
// a report sent on a connection of its own, after a daemon restart, is the runner's.
struct RunEndedRequest {
  int64_t job_id = 0;
  JobEnd end;
  std::string token;
  nlohmann::json ToJson() const;
  static Result<RunEndedRequest> Parse(const nlohmann::json& j);
};

// The longest submit_key (bytes): the CLI's keys are 32 hex digits.
inline constexpr size_t kMaxSubmitKey = 128;

// kRunRegister: the job options (ipc/job_json.h JobOptionsToJson), {"pid"} (the runner's, for
// people reading the frame; the daemon takes the peer's pid from the socket) and
// {"mps_isolation": true} when the job's environment sets GSHARE_MPS=0 (job.mps_isolation;
// absent: false).
struct RunRegisterRequest {
  JobRecord job;  // the options alone
  nlohmann::json ToJson() const;
  // JobOptionsFromJson's checks, the GPU indices against `gpu_count` (<= 0: their form only).
  static Result<RunRegisterRequest> Parse(const nlohmann::json& j, int gpu_count);
};

// kSubmit: the job options and {"env", "script"?, "submit_key"?, "array"?}.
struct SubmitRequest {
  JobRecord job;                      // the options alone
  std::vector<std::string> env;       // the environment the job runs with, NAME=value
  std::optional<std::string> script;  // a batch script's text (`submit script.sh`)
  std::string submit_key{};  // a retried submission's key, at most kMaxSubmitKey bytes; "": none
  std::string array{};       // --array's text (policy/job_array.h reads it); "": no array
  nlohmann::json ToJson() const;
  // As RunRegisterRequest, and "env" a list of strings, "script" a string or null, the key
  // and the array strings (null reads as "").
  static Result<SubmitRequest> Parse(const nlohmann::json& j, int gpu_count);
};

// kRunAttach: {"job_id"}
struct RunAttachRequest {
  int64_t job_id = 0;
  nlohmann::json ToJson() const;
  static Result<RunAttachRequest> Parse(const nlohmann::json& j);
};

// kSchedulerSet: {"enabled"}
struct SchedulerSetRequest {
  bool enabled = true;
  nlohmann::json ToJson() const;
  static Result<SchedulerSetRequest> Parse(const nlohmann::json& j);
};

// kQueueSet: {"paused": bool} (`queue pause`/`resume`) and/or {"max_running": N} (`gshare
// parallel N`: jobs per GPU slot, 1..1000; 0: back to [queue] max_running); at least one. The
// reply says the state it left ({"ok", "paused", "max_running", "max_running_from"}: "parallel"
// or "config").
struct QueueSetRequest {
  std::optional<bool> paused;
  std::optional<int> max_running;
  nlohmann::json ToJson() const;
  static Result<QueueSetRequest> Parse(const nlohmann::json& j);
};

// kStatusRequest: {} or {"job_id"}; {"brief": true} asks for the "daemon" object and, per live
// job, only {"id", "lease"} (what `queue` and `submit` read besides their own request).
struct StatusRequest {
  std::optional<int64_t> job_id;
  bool brief = false;
  nlohmann::json ToJson() const;
  static Result<StatusRequest> Parse(const nlohmann::json& j);
};

// kSlurmStep: {"gpus", "name"}. The step itself is not sent: the daemon reads it from the
// asker's process tree (base/slurm_step.h), which the asker cannot forge.
struct SlurmStepRequest {
  std::string gpus;  // the GPUs Slurm gave the step: indexes or UUIDs, comma-separated; "": none
  std::string name;  // SLURM_JOB_NAME; "": the step's JOB.STEP
  nlohmann::json ToJson() const;
  static Result<SlurmStepRequest> Parse(const nlohmann::json& j);
};

// kSlurmJob, root only: what Slurm's Prolog knows of a job starting on this node ("begin"),
// or that its Epilog runs ("end": the job's steps end in gshare, their leases and memory go).
struct SlurmJobRequest {
  std::string action;       // "begin" or "end"
  int64_t job_id = 0;       // SLURM_JOB_ID, > 0
  uint32_t uid = 0;         // SLURM_JOB_UID ("begin")
  std::string partition{};  // SLURM_JOB_PARTITION; may be ""
  std::string qos{};        // the job's QOS (scontrol show job); may be ""
  nlohmann::json ToJson() const;
  static Result<SlurmJobRequest> Parse(const nlohmann::json& j);
};

}  // namespace gshare
