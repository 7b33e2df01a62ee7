// JSON shapes shared by the daemon (which builds them) and the CLI (which prints them):
// a job record as `gshare status --json` shows it. Any thread.
#pragma once

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "model/job_record.h"

namespace gshare {

// Schema version of every JSON document gshare prints.
inline constexpr int kJsonSchemaVersion = 1;

// Serializes JSON for the wire and for people. Command lines and paths are bytes, not
// always UTF-8: invalid sequences become U+FFFD instead of throwing.
inline std::string ToJsonText(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A job as `gshare status --json`, `queue --json` and the daemon's list replies show it: "id",
// every field of the table in model/job_fields.h that is not kNever under its JSON key, and
// "state_code". Absent values are null; so are a job array's fields for a job that is no array
// task, and a Slurm step's for a job that Slurm did not start.
nlohmann::json JobToJson(const JobRecord& r);
// A run as kListJobs sends it (`gshare acct`): "id", the table's fields marked in_runs, under
// the same rules as JobToJson, and "requeued".
nlohmann::json RunToJson(const JobRun& run);

// The job options as `run` and `submit` send them (protocol.h kRunRegister, kSubmit; inside
// ipc/requests.h's RunRegisterRequest and SubmitRequest), one key per row of GS_JOB_OPTIONS
// (job_json.cc):
// {"name","argv","cwd","priority","quantum_ms","gpu","gpus","time_limit_ms","kill_after_ms",
//  "dependency","held","begin_time","output","memory","mail_user","mail_type","error",
//  "open_append","warn_signal","warn_ms","warn_main_only"}.
nlohmann::json JobOptionsToJson(const JobRecord& r);
// Reads them back into `r` and checks them as the CLI does (it comes from any local client):
// every field's JSON type; non-empty argv; priority in [kMinPriority, kMaxPriority]; quantum
// 1 ms..kMaxDuration; time limit, kill-after 0..kMaxDuration; begin time 0..now+kMaxDuration;
// no NUL in strings; a signal number below NSIG, sent at most 65535 s before a time limit the
// job has; a canonical dependency list; an absolute cwd; a known memory engine; a
// GPU spec as gpu_inventory.h CheckGpuSpec reads it, indices checked against `gpu_count`
// (<= 0: their form only). Never throws; errors are one line.
Status JobOptionsFromJson(const nlohmann::json& j, JobRecord* r, int gpu_count = 0);

}  // namespace gshare
