// The job options `run` and `submit` share (docs/cli.md "Job options"): their CLI11
// definitions, the #GSHARE directives of a batch script, and their resolution into a job
// record for the daemon. Main thread only (CLI11 objects).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/config.h"
#include "model/job_record.h"
#include "base/status.h"

namespace gshare {

// The options as given, unparsed.
struct JobOptions {
  std::string name;
  std::optional<std::string> priority;  // checked by ParsePriority
  std::string quantum;
  std::string gpu;
  std::optional<int> gpus;  // --gpus N
  std::string time_limit;
  std::string kill_after;
  std::string dependency;
  std::string after;
  bool hold = false;
  std::string begin;
  std::string output;
  std::string error;      // -e/--error: stderr's own file
  std::string open_mode;  // --open-mode: "append" or "truncate"
  std::string signal;     // --signal: base/signal_spec.h
  std::string chdir;
  std::vector<std::string> env;  // "K=V"
  std::string memory;            // --memory engine
  std::string array;             // --array (submit only): base/array_spec.h
  std::string mail_user;         // --mail-user: who the [notify] command may tell
  std::string mail_type;         // --mail-type: base/mail_type.h

  // Long names of the options given (filled by MarkGiven), for Merge.
  std::set<std::string> given;
  std::vector<std::pair<std::string, CLI::Option*>> options;  // filled by AddJobOptions

  // Records which options the last parse set.
  void MarkGiven();
  // Takes each option not given here from `script` (a batch script's #GSHARE lines); --env
  // entries of both are kept, the script's first.
  void Merge(const JobOptions& script);
};

// A priority as written on the command line or in a #GSHARE line: an optional '-' or '+'
// and decimal digits, within [kMinPriority, kMaxPriority]. "", "0x10", "1e3" and " 5" are
// errors naming --priority.
Result<int> ParsePriority(const std::string& text);

// Adds the job options to `app`, bound to `opt`.
void AddJobOptions(CLI::App& app, JobOptions* opt);
// Adds the options only a batch job has (`submit` and its #GSHARE lines): -a/--array.
void AddBatchOptions(CLI::App& app, JobOptions* opt);

// Parses a batch script's #GSHARE lines (script_directives.h) as job and batch options
// (AddBatchOptions). Errors: a bad directive line, an unknown option, an option that is not
// a job option; one line naming the script.
Result<JobOptions> ParseScriptOptions(const std::string& script_text, const std::string& path);

// A job record from `opt` for `argv`: durations and times parsed (begin relative to `now`,
// unix seconds), dependencies in canonical form, the working directory made absolute
// (default: ours), defaults from `config`, --gpu checked against the GPUs present
// (gpu_inventory.h). kind, state, uid and submit time are left to the caller. Errors are the
// one-line usage messages of docs/cli.md, naming the option.
Result<JobRecord> ResolveJobOptions(const JobOptions& opt, std::vector<std::string> argv,
                                    const Config& config, double now);

// Refuses a job that could only fail when it starts, checked as this user (whom the job runs
// as): its working directory is not a directory it may enter, or its output file cannot be
// made: the file's directory does not exist or may not be written (an existing file must be
// writable). Where a %-symbol of the pattern (%j, %x, ...) names directories, only those
// before it are checked: the ones after it depend on the job and may be made before it starts.
// Errors are one line naming the option and the path.
Status CheckJobPaths(const JobRecord& r);

}  // namespace gshare
