// The fields of `gshare acct` (docs/cli.md "History"): sacct(1)'s --format names (JobID,
// JobName, State, Submit, Start, End, Elapsed, Reserved, ExitCode, ...) and gshare's own
// (GPUTime, LeaseWait, PeakMem, Swaps, GPU), their text in tables, in -P lines and in JSON.
// Pure functions of their arguments (the user-name lookup is the caller's): main thread.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/job_record.h"

namespace gshare {

// What a row's values may depend on besides the run.
struct AcctContext {
  double now = 0;                                 // unix seconds: elapsed of running jobs
  std::function<std::string(uint32_t uid)> user;  // a user's name
};

struct AcctField {
  std::string name;   // as sacct prints it in the heading: "JobID", "GPUTime"
  size_t width = 10;  // table width; a longer cell is cut and ends in '+', as sacct does
  // The cell's text, escaped for a terminal (base/terminal_text.h).
  std::function<std::string(const JobRun&, const AcctContext&)> value;
};

// The fields of a comma-separated list of names in any case, each with an optional "%N"
// width as sacct's ("JobName%30"), in its order. Fails on an empty list or item, a bad width
// or an unknown name, with one line that lists the known ones.
Result<std::vector<AcctField>> ParseAcctFormat(std::string_view list);
// JobID, JobName, User, State, Start, Elapsed, Reserved, GPUTime, PeakMem, Swaps, ExitCode.
std::vector<AcctField> DefaultAcctFormat();
// Every field, in AcctFieldNames' order (sacct -l, --long).
std::vector<AcctField> LongAcctFormat();
// Every field name, comma-separated.
std::string AcctFieldNames();

enum class AcctStyle {
  kTable,      // columns of their widths, a heading and a line of dashes
  kParsable,   // -p: '|' after each field
  kParsable2,  // -P: '|' between fields
};
// The heading line(s) for `fields`, each ending in '\n'.
std::string AcctHeader(const std::vector<AcctField>& fields, AcctStyle style);
// One run's line, ending in '\n'.
std::string AcctLine(const std::vector<AcctField>& fields, const JobRun& run,
                     const AcctContext& context, AcctStyle style);
// One run as `acct --json` prints it (docs/cli.md lists the keys).
nlohmann::json AcctJson(const JobRun& run, const AcctContext& context);

// "REQUEUED" for an earlier run that a requeue ended, else the run's state's name.
std::string AcctStateText(const JobRun& run);
// sacct's ExitCode: "code:signal" ("0:0", "3:0", "0:9"; a killing signal's code is 0).
std::string ExitCodeText(const JobRecord& r);
// sacct's durations: "HH:MM:SS", "D-HH:MM:SS" (negative counts as 0).
std::string AcctDuration(double seconds);
// Bytes in sacct's units: "0", "512K", "1.50G" (powers of 1024, at most two decimals).
std::string AcctBytes(uint64_t bytes);
// sacct's and scontrol's local "YYYY-MM-DDTHH:MM:SS"; "Unknown" when unset, as they print it.
std::string TimeText(const std::optional<double>& unix_seconds);
// Run time: end (or now) less start; 0 before it starts.
double RunElapsed(const JobRecord& r, double now);
// Time in the queue before it started: start (or now, while pending) less submission.
double RunReserved(const JobRecord& r, double now);

}  // namespace gshare
