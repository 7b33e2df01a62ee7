// The fields of a JobRecord (job_record.h) as gshare stores and sends them: one row each. The
// store expands the table into the jobs table's columns (store/job_row.cc: bind and read), the
// protocol into a job's JSON forms (ipc/job_json.cc: JobToJson, RunToJson; ipc/job_list.cc:
// JobFromJson). Adding a field to JobRecord is one row here, plus its column in the store's
// schema migration (store/job_store_schema.cc); test/unit/store/job_store_test.cc fails until the
// new field round-trips.
//
// GS_JOB_FIELDS(X) calls X(member, column, json_key, shown, in_runs) per field but `id` (the
// row's key, assigned by the store; every form names it itself):
//   member    JobRecord's member; its C++ type picks the codec in each expansion
//   column    its column in the jobs table
//   json_key  its key in a job's JSON (queue/status --json, the daemon's list replies)
//   shown     JobFieldShown below: when the JSON carries the value
//   in_runs   also in a run's JSON (`gshare acct --json`, the history's list replies)
// Plain macro data; any thread.
#pragma once

namespace gshare {

enum class JobFieldShown {
  kAlways,
  kArrayTask,  // null unless the job is an array task (JobRecord::IsArrayTask)
  kSlurm,      // null unless Slurm started the job (kind JobKind::kSlurm)
  kNever,      // never in JSON: the job's secret, or the daemon's own bookkeeping
};

// clang-format off
#define GS_JOB_FIELDS(X)                                                          \
  X(name,             "name",             "name",             kAlways,    true)  \
  X(argv,             "argv",             "argv",             kAlways,    false) \
  X(cwd,              "cwd",              "cwd",              kAlways,    false) \
  X(uid,              "uid",              "uid",              kAlways,    true)  \
  X(priority,         "priority",         "priority",         kAlways,    true)  \
  X(quantum_ms,       "quantum_ms",       "quantum_ms",       kAlways,    false) \
  X(gpu,              "gpu",              "gpu",              kAlways,    true)  \
  X(state,            "state",            "state",            kAlways,    true)  \
  X(reason,           "reason",           "reason",           kAlways,    true)  \
  X(submit_time,      "submit_time",      "submit_time",      kAlways,    true)  \
  X(start_time,       "start_time",       "start_time",       kAlways,    true)  \
  X(end_time,         "end_time",         "end_time",         kAlways,    true)  \
  X(exit_code,        "exit_code",        "exit_code",        kAlways,    true)  \
  X(signal,           "signal",           "signal",           kAlways,    true)  \
  X(pid,              "pid",              "pid",              kAlways,    false) \
  X(lease_seconds,    "lease_seconds",    "lease_seconds",    kAlways,    true)  \
  X(wait_seconds,     "wait_seconds",     "wait_seconds",     kAlways,    true)  \
  X(peak_bytes,       "peak_bytes",       "peak_bytes",       kAlways,    true)  \
  X(kind,             "kind",             "kind",             kAlways,    true)  \
  X(output,           "output",           "output",           kAlways,    false) \
  X(time_limit_ms,    "time_limit_ms",    "time_limit_ms",    kAlways,    false) \
  X(kill_after_ms,    "kill_after_ms",    "kill_after_ms",    kAlways,    false) \
  X(dependency,       "dependency",       "dependency",       kAlways,    false) \
  X(held,             "held",             "held",             kAlways,    false) \
  X(begin_time,       "begin_time",       "begin_time",       kAlways,    false) \
  X(end_request,      "end_request",      "end_request",      kNever,     false) \
  X(runner_pid,       "runner_pid",       "runner_pid",       kNever,     false) \
  X(runner_start,     "runner_start",     "runner_start",     kNever,     false) \
  X(slot,             "slot",             "slot",             kAlways,    true)  \
  X(memory,           "memory",           "memory_engine",    kAlways,    false) \
  X(token,            "token",            "token",            kNever,     false) \
  X(gpus,             "gpus",             "gpus",             kAlways,    true)  \
  X(array_job_id,     "array_job_id",     "array_job_id",     kArrayTask, true)  \
  X(array_task_id,    "array_task_id",    "array_task_id",    kArrayTask, true)  \
  X(array_task_count, "array_task_count", "array_task_count", kArrayTask, false) \
  X(array_task_min,   "array_task_min",   "array_task_min",   kArrayTask, false) \
  X(array_task_max,   "array_task_max",   "array_task_max",   kArrayTask, false) \
  X(array_limit,      "array_limit",      "array_limit",      kArrayTask, false) \
  X(swaps_out,        "swaps_out",        "swaps_out",        kAlways,    true)  \
  X(swaps_in,         "swaps_in",         "swaps_in",         kAlways,    true)  \
  X(restarts,         "restarts",         "restarts",         kAlways,    true)  \
  X(slurm_job_id,     "slurm_job_id",     "slurm_job_id",     kSlurm,     false) \
  X(slurm_step,       "slurm_step",       "slurm_step",       kSlurm,     false) \
  X(mail_user,        "mail_user",        "mail_user",        kAlways,    false) \
  X(mail_type,        "mail_type",        "mail_type",        kAlways,    false) \
  X(error,            "error",            "error",            kAlways,    false) \
  X(open_append,      "open_append",      "open_append",      kAlways,    false) \
  X(warn_signal,      "warn_signal",      "warn_signal",      kAlways,    false) \
  X(warn_ms,          "warn_ms",          "warn_ms",          kAlways,    false) \
  X(warn_main_only,   "warn_main_only",   "warn_main_only",   kAlways,    false)
// clang-format on

}  // namespace gshare
