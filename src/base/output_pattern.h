// The --output file name pattern of a job, with Slurm's replacement symbols (sbatch(1)
// "filename pattern"). Pure function of its arguments: any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gshare {

// Returns `pattern` with %j replaced by `job_id`, %x by `job_name`, %u by `user` and %% by a
// single '%'. Any other "%c", and a '%' that ends the pattern, is kept as written, as Slurm
// ignores symbols it does not know. Nothing else is changed (no expansion of '~' or $VAR).
std::string ExpandOutputPattern(std::string_view pattern, int64_t job_id, std::string_view job_name,
                                std::string_view user);

}  // namespace gshare
