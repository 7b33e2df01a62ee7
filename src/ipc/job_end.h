// How a job ended, as its runner (`gshare run` or the job's supervisor) reports it to the
// daemon (kRunEnded) and, so that a daemon that is down meanwhile still learns it, leaves it
// in <state_dir>/jobs/<id>.end. Any thread.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/job_state.h"
#include "base/status.h"

namespace gshare {

struct JobEnd {
  std::optional<int> exit_code;
  std::optional<int> signal;
  bool timed_out = false;
  // Its user interrupted it through its runner (Ctrl-C, a hang-up: runner/job_runner.h
  // ExitInfo::interrupted).
  bool interrupted = false;
  std::string error;  // the runner's own failure (the job could not start), else empty
  // When the job's process ended, unix seconds, as its runner saw it: the record's end time,
  // even when the daemon learns of the end much later (it was down meanwhile).
  std::optional<double> end_time;
};

nlohmann::json JobEndToJson(const JobEnd& end, int64_t job_id);
// Never throws; a missing field reads as absent.
JobEnd JobEndFromJson(const nlohmann::json& j);

// <state_dir>/jobs/<job_id>.end
std::string JobEndPath(const std::string& state_dir, int64_t job_id);
// <state_dir>/jobs/<job_id>.start: made by a job's supervisor before it starts the job, so
// that a daemon that finds the supervisor gone knows whether the job may have run (then it
// is LOST) or never did (then it is queued again).
std::string JobStartPath(const std::string& state_dir, int64_t job_id);
// Creates the marker at `path` holding this process's pid (0600, fsync'ed), creating the
// directory (0700).
Status WriteJobStart(const std::string& path);
// Writes atomically (temporary file, fsync, rename), creating the directory (0700).
Status WriteJobEnd(const std::string& path, const JobEnd& end, int64_t job_id);
// The report at `path`, or nullopt when there is none, it cannot be parsed, or it is not a
// regular file of at most 64 KiB reached without following a final symbolic link.
std::optional<JobEnd> ReadJobEnd(const std::string& path);

// The job's final state for a report: TIMEOUT, COMPLETED (exit 0), CANCELLED when its user
// interrupted it (as Slurm records an interrupted srun, and as a pending job interrupted
// already is), else FAILED.
JobState FinalStateOf(const JobEnd& end);

}  // namespace gshare
