// Slurm's --mail-type values (sbatch(1)): which of a job's events its --mail-user wants to hear
// of. gshare passes both to the [notify] command, which decides what to send. Pure; any thread.
#pragma once

#include <string>

#include "base/status.h"

namespace gshare {

// "end,FAIL" -> "END,FAIL": a comma-separated list of NONE, BEGIN, END, FAIL, REQUEUE,
// TIME_LIMIT, INVALID_DEPEND, ALL (any case), each once, in this order; NONE alone is "".
// Errors name the value that is none of these.
Result<std::string> ParseMailTypes(const std::string& text);

// --mail-user: one line (no CR, LF, tab or NUL) of at most kMaxMailUser bytes; "" is none.
inline constexpr size_t kMaxMailUser = 256;
Status CheckMailUser(const std::string& user);

}  // namespace gshare
