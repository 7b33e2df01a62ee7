// The --output file name pattern of a job, with Slurm's replacement symbols (sbatch(1)
// "filename pattern"). Pure function of its arguments: any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gshare {

// Returns `pattern` with %j replaced by `job_id`, %x by `job_name`, %u by `user`, %% by a
// single '%', and for a task of a job array (--array) %A by `array_job_id` and %a by
// `array_task_id`. For a job that is no array task (array_task_id nullopt) %A is its own id,
// as in Slurm, and %a is replaced by nothing (Slurm writes 4294967294). Any other "%c", and a
// '%' that ends the pattern, is kept as written, as Slurm ignores symbols it does not know.
// Nothing else is changed (no expansion of '~' or $VAR).
std::string ExpandOutputPattern(std::string_view pattern, int64_t job_id, std::string_view job_name,
                                std::string_view user, int64_t array_job_id = 0,
                                std::optional<int64_t> array_task_id = std::nullopt);

}  // namespace gshare
