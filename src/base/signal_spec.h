// Signals as people name them ("TERM", "SIGUSR1", "usr1", "10"), and sbatch's --signal
// ("[B:]SIG[@SECONDS]": a signal sent that long before the job's time limit; Slurm's sbatch(1),
// --signal). Pure functions; any thread.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "base/status.h"

namespace gshare {

// A signal number from its name (any case, with or without "SIG") or its number, in
// [1, NSIG); nullopt otherwise.
std::optional<int> ParseSignal(std::string_view text);

// A warning signal before the time limit, as sbatch --signal gives it.
struct SignalSpec {
  int signal = 0;                            // 0: none
  std::chrono::milliseconds before{60'000};  // before the limit; sbatch's default, 60 s
  bool main_only = false;                    // "B:": only the job's main process, not its group
};

// Longest SECONDS sbatch takes (65535).
inline constexpr int kMaxSignalLeadSeconds = 65535;

// "[B:]SIG[@SECONDS]", SECONDS a whole number in [0, kMaxSignalLeadSeconds]. Errors: one line
// quoting the text and naming the form ("R:" is Slurm's reservation flag, which gshare has no
// use for: refused).
Result<SignalSpec> ParseSignalSpec(std::string_view text);

}  // namespace gshare
