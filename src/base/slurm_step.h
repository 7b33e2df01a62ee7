// Which Slurm job step a process runs in, proved by the process tree rather than taken from
// its environment (which its user controls). slurmstepd, root's, names itself
// "slurmstepd: [JOB.STEP]" (Slurm src/slurmd/slurmstepd/slurmstepd.c, setproctitle), forks a
// child per task that drops to the user and execs the task (and TaskProlog before it). So the
// first ancestor of a task's process whose real and effective uid are 0 is that step's
// slurmstepd: a user's process cannot make a root process its ancestor, and a root-owned
// title cannot be set by a user. Reads /proc; any thread; errors are nullopt.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gshare {

struct SlurmStep {
  int64_t job_id = 0;  // SLURM_JOB_ID, > 0
  // SLURM_STEP_ID as Slurm writes it: a number, or "batch", "extern", "interactive".
  std::string step;
  pid_t stepd_pid = 0;      // the step's root slurmstepd
  int64_t stepd_start = 0;  // its start time (process_identity.h), for liveness across reuse
  bool operator==(const SlurmStep&) const = default;
};

// "slurmstepd: [12.0]" (trailing spaces or NULs allowed) -> {12, "0"}; anything else ->
// nullopt. Only the id fields are set.
std::optional<SlurmStep> ParseStepdTitle(std::string_view cmdline);

// Walks from `pid` up its parents (at most 64) to the first process whose real and effective
// uid are 0; returns its step when it is a slurmstepd, else nullopt (`pid` itself root's, no
// slurmstepd above, a process gone meanwhile). `proc_root` is "/proc" but for tests.
std::optional<SlurmStep> SlurmStepOf(pid_t pid, const std::string& proc_root = "/proc");

// "12.0", "12.batch": Slurm's JOB.STEP spelling, as squeue -s and sacct print it.
std::string StepName(int64_t job_id, const std::string& step);

}  // namespace gshare
