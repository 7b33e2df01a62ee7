// The environment variables gshare sets in a job's environment (docs/cli.md, "ENVIRONMENT" of
// `gshare man`): who the job is and where its daemon listens, how its shim shares the GPU,
// which array task it is, and the MPS backend's, read by the CUDA driver (NVIDIA's MPS
// documentation, "Environment variables") or by the shim. One name, one place: the daemon,
// `gshare run`, the job supervisor and the shim all use these. Constants, and the one rule
// on GSHARE_MPS's value (MpsOptOutValue). Header only: the shim includes it.
#pragma once

#include <string_view>

namespace gshare::job_env {

// The daemon's socket the job's shim and commands talk to.
inline constexpr char kSocket[] = "GSHARE_SOCKET";
// The job's id (decimal), name, and its token (32 hex digits: base/job_token.h), which proves
// to the daemon that a process belongs to the job.
inline constexpr char kJobId[] = "GSHARE_JOB_ID";
inline constexpr char kJobName[] = "GSHARE_JOB_NAME";
inline constexpr char kJobToken[] = "GSHARE_JOB_TOKEN";
// The memory engine: swap, managed, checkpoint or off (docs/memory.md, "Engines").
inline constexpr char kMemory[] = "GSHARE_MEMORY";
// The lease's idle release (ms, > 0) and whether the early release is on ("0": off).
inline constexpr char kIdleReleaseMs[] = "GSHARE_IDLE_RELEASE_MS";
inline constexpr char kEarlyRelease[] = "GSHARE_EARLY_RELEASE";
// Set: the shim says nothing on stderr that `gshare run` said already.
inline constexpr char kQuiet[] = "GSHARE_QUIET";
// The umask the job's processes start with (octal), kept from the submitting shell.
inline constexpr char kJobUmask[] = "GSHARE_JOB_UMASK";
// A job array's task (`submit --array`, as Slurm's SLURM_ARRAY_*): the array's id, this task's
// index, the number of tasks, the lowest and highest index. kArrayPrefix names them all.
inline constexpr char kArrayPrefix[] = "GSHARE_ARRAY_";
inline constexpr char kArrayJobId[] = "GSHARE_ARRAY_JOB_ID";
inline constexpr char kArrayTaskId[] = "GSHARE_ARRAY_TASK_ID";
inline constexpr char kArrayTaskCount[] = "GSHARE_ARRAY_TASK_COUNT";
inline constexpr char kArrayTaskMin[] = "GSHARE_ARRAY_TASK_MIN";
inline constexpr char kArrayTaskMax[] = "GSHARE_ARRAY_TASK_MAX";

// The driver's: the MPS control daemon's pipe and log folders, the client's priority (0
// normal, 1 below normal) and its cap on the GPU's threads, in percent.
inline constexpr char kMpsPipeDirectory[] = "CUDA_MPS_PIPE_DIRECTORY";
inline constexpr char kMpsLogDirectory[] = "CUDA_MPS_LOG_DIRECTORY";
inline constexpr char kMpsClientPriority[] = "CUDA_MPS_CLIENT_PRIORITY";
inline constexpr char kMpsActiveThreadPercentage[] = "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE";
// gshare's: "1" when gshare made the job an MPS client (the shim then lets a lower-priority
// process run beside a busy higher one, windowed, instead of stopping it); a job whose own
// environment sets GSHARE_MPS=0 asks to run outside MPS (isolation).
inline constexpr char kMpsClient[] = "GSHARE_MPS_CLIENT";
inline constexpr char kMpsOptOut[] = "GSHARE_MPS";
// Whether a value of GSHARE_MPS asks to run outside MPS: 0, no, off or false. Pure.
inline constexpr bool MpsOptOutValue(std::string_view v) {
  return v == "0" || v == "no" || v == "off" || v == "false";
}

}  // namespace gshare::job_env
