// A job array's task ids as `submit --array` takes them, in sbatch(1)'s syntax: "0-9",
// "1,3,5", "0-15:4", each optionally followed by "%N", the most tasks of the array that
// run at once. Pure functions of their arguments: any thread.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace gshare {

// At most this many tasks in one array (a submission inserts every task's row at once).
inline constexpr int64_t kMaxArrayTasks = 10'000;
// The highest task id (Slurm's MaxArraySize - 1 is a site setting; this bounds the text).
inline constexpr int64_t kMaxArrayTaskId = 999'999'999;

struct ArraySpec {
  std::vector<int64_t> task_ids;  // ascending, without duplicates, never empty
  int64_t limit = 0;              // "%N": at most N tasks running at once; 0: no limit
};

// Parses `text`: a comma-separated list of items, each "N", "N-M" (N <= M) or "N-M:S"
// (S >= 1: N, N+S, ... up to M), then optionally "%N" (N >= 1). Ids are decimal, within
// [0, kMaxArrayTaskId]; an id named twice counts once. Errors (one line, without the option's
// name): empty text or item, a word that is not a decimal number, a range that ends before
// it begins, a step or limit of 0, more than kMaxArrayTasks tasks.
Result<ArraySpec> ParseArraySpec(std::string_view text);

}  // namespace gshare
