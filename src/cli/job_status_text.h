// `gshare status ID` for people: one job as a block of Key=Value lines in the manner of
// `scontrol show job`, with local times, short durations ("1h02m"), sizes in MiB/GiB, the
// command quoted as a shell reads it and the output file's pattern expanded. Pure function of
// its arguments (the user-name lookup is the caller's): main thread of the CLI.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace gshare {

// The block for `job`, one element of the daemon's status reply "jobs" (ipc/job_json.h
// JobToJson with the live fields: "lease", "idle_seconds", "memory", "hidden"), at unix time
// `now`; `user` names a uid. Lines end in '\n'. Fails (empty string) on a job JSON that does
// not read back (JobFromJson).
std::string JobStatusText(const nlohmann::json& job, double now,
                          const std::function<std::string(uint32_t)>& user);

// A job's COMMAND column (`status`, `top`): its argv joined by spaces, safe for a terminal; for
// a Slurm step whose argv is hidden from the viewer, "slurm step JOB.STEP" (its Slurm id is no
// secret). "" when there is neither.
std::string JobCommandText(const nlohmann::json& job);

}  // namespace gshare
