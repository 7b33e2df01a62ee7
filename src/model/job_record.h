// The job as the whole of gshare speaks of it: the row of the jobs table (JobRecord), a run of
// it as history lists it (JobRun) and what a submitted job carries besides (JobPayload). The
// store saves them, the protocol carries them, the CLI prints them; none of that is here.
// Plain data and pure functions; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/job_state.h"
#include "base/output_pattern.h"
#include "base/memory_engine.h"

namespace gshare {

// What started a job: `gshare run` in the foreground, `gshare submit` (the queue's
// supervisor runs it), or Slurm (a step's tasks, `gshare slurm task-prolog`).
enum class JobKind { kRun, kSubmit, kSlurm };
// "run", "submit", "slurm": the store's `kind` column and the JSON forms.
std::string_view JobKindName(JobKind kind);
// The kind `name` names, or nullopt.
std::optional<JobKind> ParseJobKind(std::string_view name);

// One row of the jobs table. Times are unix seconds.
struct JobRecord {
  int64_t id = 0;  // assigned by Insert
  std::string name;
  std::vector<std::string> argv;  // stored as a JSON array; invalid UTF-8 is stored as U+FFFD
  std::string cwd;
  uint32_t uid = 0;
  int priority = 0;
  int64_t quantum_ms = 0;
  std::string gpu;  // as the user gave it (indexes or UUIDs, comma-separated); empty: any
  int gpus = 1;     // GPUs the job uses at once (--gpus; a gang lease when more than one)
  JobState state = JobState::kPending;
  std::string reason;  // why a pending job waits; may be empty
  double submit_time = 0;
  std::optional<double> start_time;
  std::optional<double> end_time;
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::optional<int> pid;
  double lease_seconds = 0;  // time holding a GPU lease
  double wait_seconds = 0;   // time waiting for one
  uint64_t peak_bytes = 0;   // peak GPU memory
  JobKind kind = JobKind::kSubmit;
  // Queue options (schema 2 on). Durations in milliseconds, 0: none.
  std::string output;              // output file pattern (%j %x %u %%); empty: the terminal (run)
  int64_t time_limit_ms = 0;       // -t/--time; 0: no limit
  int64_t kill_after_ms = 30'000;  // SIGTERM -> SIGKILL grace for the time limit and cancel
  std::string dependency;          // canonical "afterok:1:2,afterany:3" (dependency.h); empty: none
  bool held = false;               // -H / `gshare hold`: not started until released
  std::optional<double> begin_time;  // --begin: not started before (unix seconds)
  std::string end_request;           // "cancel" or "requeue" once asked for a running job; else ""
  // The process that reports the job's end (`gshare run` or the job's supervisor), identified
  // across pid reuse by its start time (/proc/PID/stat field 22, clock ticks since boot).
  std::optional<int> runner_pid;
  std::optional<int64_t> runner_start;
  std::string slot;                    // GPU slot the queue placed the job on ("0", "1", a UUID)
  std::optional<MemoryEngine> memory;  // schema 4: --memory; nullopt: the config's engine
  // Schema 6: the job's secret (base/job_token.h), which its processes show the daemon to join
  // the job. Never printed, never in JSON.
  std::string token;
  // Schema 8: a task of a job array (`submit --array`). array_job_id is the array's id, its
  // first task's id (Slurm's SLURM_ARRAY_JOB_ID); 0: the job is no array task, and the other
  // fields are 0. The array's task count, lowest and highest task ids, and its "%N" limit of
  // tasks running at once (0: none) are the same in each of its tasks.
  int64_t array_job_id = 0;
  int64_t array_task_id = 0;
  int64_t array_task_count = 0;
  int64_t array_task_min = 0;
  int64_t array_task_max = 0;
  int64_t array_limit = 0;
  // Schema 9: accounting (`gshare acct`). The job's memory swapped out and back in (its
  // processes' evictions and swap-ins, whole-process checkpoints and restores among them), and
  // how many runs came before this one (sacct's Restarts; requeue keeps each in job_runs).
  uint64_t swaps_out = 0;
  uint64_t swaps_in = 0;
  int restarts = 0;
  // Schema 11: a job that Slurm started (kind "slurm"): its Slurm job id and step ("0",
  // "batch"); 0 and "" for every other job.
  int64_t slurm_job_id = 0;
  std::string slurm_step;
  // Schema 12: --mail-user and --mail-type (base/mail_type.h's canonical list; "": none),
  // passed to the [notify] command.
  std::string mail_user;
  std::string mail_type;
  // Schema 13: stderr's own file pattern (-e/--error, as `output`; empty: with stdout), whether
  // the output files are appended to rather than truncated (--open-mode=append), and sbatch's
  // --signal (base/signal_spec.h): a signal (0: none) sent warn_ms before the time limit, to
  // the job's main process only when warn_main_only ("B:"), else to its process group.
  std::string error;
  bool open_append = false;
  int warn_signal = 0;
  int64_t warn_ms = 0;
  bool warn_main_only = false;
  // Not stored: the job's environment sets GSHARE_MPS=0, so it runs outside MPS (isolation;
  // include/gshare/job_env.h). Known from a `gshare run`'s registration and, for a submitted job,
  // from its environment at launch, which is when the daemon chooses a job's MPS client role; a
  // job re-adopted by a restarted daemon reads false and is no longer launched.
  bool mps_isolation = false;

  bool IsArrayTask() const { return array_job_id != 0; }
  bool operator==(const JobRecord&) const = default;
};

// One run of a job as `gshare acct` lists it: the job's row (its latest run), or an earlier run
// of a requeued job, kept in the job_runs table: then `job` is the job's row with that run's
// state, reason, times, exit, usage and GPU slot in place of the latest's, and job.restarts its
// number (0: the first run).
struct JobRun {
  JobRecord job;
  bool requeued = false;  // an earlier run that `gshare requeue` ended (sacct's REQUEUED)
};

// Makes `r` PENDING again (requeue): as new but for its id, options and submission time.
void ResetForQueue(JobRecord& r);

// What a submitted job carries besides its row: kept in a table of its own so that listing
// jobs never reads it. The tasks of a job array share one, stored with the array's job id
// (PayloadIdOf).
struct JobPayload {
  std::vector<std::string> env;       // "K=V" entries: the environment the job starts with
  std::optional<std::string> script;  // the batch script's text (`submit --script`)
  // The client's key of the submission (empty: none); unique among stored jobs, so that a
  // submit retried after a lost reply finds the job it made (FindBySubmitKey).
  std::string submit_key;
};

// The id a job's payload is stored under: its array's job id for an array task, else its own.
inline int64_t PayloadIdOf(const JobRecord& r) { return r.IsArrayTask() ? r.array_job_id : r.id; }
// An array task's task id (for %a in output patterns); nullopt for any other job.
inline std::optional<int64_t> ArrayTaskIdOf(const JobRecord& r) {
  return r.IsArrayTask() ? std::optional<int64_t>(r.array_task_id) : std::nullopt;
}
// The path of one of `r`'s files, `pattern` (its output or error pattern) with its symbols
// expanded (base/output_pattern.h) for `r` and its owner's name `user`.
inline std::string JobFilePath(std::string_view pattern, const JobRecord& r,
                               std::string_view user) {
  return ExpandOutputPattern(pattern, r.id, r.name, user, r.array_job_id, ArrayTaskIdOf(r));
}

}  // namespace gshare
