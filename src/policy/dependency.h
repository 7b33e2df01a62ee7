// Job dependencies as Slurm writes them (sbatch(1) --dependency, "afterok:1:2,afterany:3"):
// parsing, the canonical text stored with a job, and whether they hold given the other jobs'
// states. Pure functions of their arguments: any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/job_state.h"
#include "base/status.h"

namespace gshare {

enum class DependencyType {
  kAfterOk,     // the job ended COMPLETED
  kAfterAny,    // the job ended, in any state
  kAfterNotOk,  // the job ended in a state other than COMPLETED
  kSingleton,   // no earlier job of the same name and user is pending or running (sbatch(1))
};

struct Dependency {
  DependencyType type;
  int64_t job;  // a positive job id; 0 for kSingleton, which names none
  bool operator==(const Dependency&) const = default;
};

// Parses a --dependency list: entries TYPE:ID[:ID...] or `singleton` joined by ',' (all must
// hold), TYPE one of afterok, afterany, afternotok (any case); surrounding blanks are ignored.
// Returns one Dependency per id, in the order written (duplicates kept). On failure (empty list or
// entry, unknown type, missing id, an id that is not a positive integer, Slurm's '?' for "any of",
// which gshare does not support) returns an error whose one-line message quotes the input.
Result<std::vector<Dependency>> ParseDependencies(std::string_view text);

// Parses the --after shorthand "ID[,ID...]": afterok on each id, in order. Errors as above.
Result<std::vector<Dependency>> ParseAfter(std::string_view text);

// The canonical text of `deps`, consecutive entries of one type sharing a group:
// {afterok 1, afterok 2, afterany 3} -> "afterok:1:2,afterany:3"; {} -> ""; a singleton
// entry is "singleton".
// ParseDependencies(FormatDependencies(x)) == x for every non-empty x of positive ids.
std::string FormatDependencies(const std::vector<Dependency>& deps);

// The job ids `deps` name, in order (a singleton entry names none).
std::vector<int64_t> NamedJobs(const std::vector<Dependency>& deps);
// Whether `deps` has a singleton entry.
bool HasSingleton(const std::vector<Dependency>& deps);

enum class DependencyState {
  kWaiting,    // may still hold: wait
  kSatisfied,  // holds
  kNever,      // can no longer hold (Slurm's DependencyNeverSatisfied)
};

// One dependency, given the state of the job it names (nullopt when that job does not exist:
// kNever). A state not final waits; afterok holds on COMPLETED and never on another end;
// afterany holds on any end; afternotok holds on an end other than COMPLETED and never on
// COMPLETED.
DependencyState EvaluateDependency(DependencyType type, std::optional<JobState> job_state);

// All of `deps` together: kNever if any is never, else kWaiting if any waits, else kSatisfied
// (also for an empty list). `state_of(job_id)` returns the job's state as above; it may not be
// called for every dependency once one is never. A singleton entry waits while
// `singleton_waits` (an earlier job of the job's name and user is pending or running).
DependencyState EvaluateDependencies(
    const std::vector<Dependency>& deps,
    const std::function<std::optional<JobState>(int64_t)>& state_of, bool singleton_waits);

}  // namespace gshare
