// Environment variables gshare sets in a job's environment for the MPS backend, read by the
// CUDA driver (NVIDIA's MPS documentation, "Environment variables") or by the shim. Shared by
// the daemon, `gshare run`, the job supervisor and the shim. Constants only.
#pragma once

namespace gshare::job_env {

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

}  // namespace gshare::job_env
