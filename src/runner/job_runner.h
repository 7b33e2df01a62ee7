// JobRunner runs one command in the foreground the way `gshare run` must: own process group, the
// terminal handed over, signals forwarded to the group, the exact exit status brought back.
// Threads: Run may be called from any thread but only by one at a time per process, because it
// changes process-wide signal dispositions while the job runs. The other functions: any thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "ipc/job_end.h"

namespace gshare {

struct RunSpec {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH (execvp) unless it holds a '/'
  // The job's whole environment ("K=V" entries) instead of ours, when set (a submitted job's
  // snapshot). set_env and preload apply on top of it.
  std::optional<std::vector<std::string>> env;
  std::vector<std::pair<std::string, std::string>> set_env;  // set (or replaced) in the job's env
  // Paths prepended to LD_PRELOAD, colon-joined before any existing value (after set_env).
  std::vector<std::string> preload;
  std::string cwd;  // the job's working directory; empty: ours
  // stdout, and stderr unless error_path is set, go to this file (created 0644, truncated
  // unless `append`); empty: ours.
  std::string output_path;
  std::string error_path;   // stderr's own file, as output_path; empty: with stdout
  bool append = false;      // the files are appended to, not truncated
  bool stdin_null = false;  // stdin is /dev/null instead of ours (and the terminal is not taken)
  // Time limit (0: none): at the limit the job's group gets SIGTERM, SIGKILL `kill_after` later,
  // and ExitInfo::timed_out is set.
  std::chrono::milliseconds time_limit{0};
  std::chrono::milliseconds kill_after{30'000};
  // sbatch --signal: warn_signal (0: none) sent warn_before ahead of the time limit (at once
  // when that is before the start), to the job's group, or to its first process alone when
  // warn_main_only. Only with a time limit.
  int warn_signal = 0;
  std::chrono::milliseconds warn_before{0};
  bool warn_main_only = false;
  // The job's process dies (SIGKILL) when the runner does, even by SIGKILL: its signals
  // reach the job's group only while the runner lives, and a notebook server ends a kernel by
  // SIGKILL to the runner's group, which the job (a group of its own) is not in. Set before
  // exec with PR_SET_PDEATHSIG, which follows the thread that called Run: call Run from a
  // thread that lives as long as the process. Only the job's first process gets the signal,
  // not the processes it starts.
  bool die_with_runner = false;
};

struct ExitInfo {
  std::optional<int> exit_code;  // set when the job exited (or could not be exec'd: 126/127)
  std::optional<int> signal;     // set when the job was killed by a signal
  bool core_dumped = false;
  bool timed_out = false;  // the time limit ended it (timeout(1) reports 124)
  // The job's user asked it to end from the terminal: the runner forwarded a SIGINT (Ctrl-C)
  // or SIGHUP (a hang-up) to the job's group, or, while the job held the terminal, the job
  // died of one of them (the terminal sends them to its foreground group, the job's, not to
  // the runner).
  bool interrupted = false;
  // Non-empty when exec failed: strerror(errno), e.g. "No such file or directory". The CLI prints
  // "gshare: CMD: <exec_error>". exit_code is then 127 for ENOENT and 126 for any other errno.
  // When spec.cwd could not be entered: "cannot change directory to DIR: <strerror>", 126.
  std::string exec_error;
};

class JobRunner {
 public:
  // Runs spec.argv as a child and waits for it to end. The child gets its own process group
  // (pgid == pid); when stdin is a terminal and we are in its foreground group, that group is
  // made the terminal's foreground group and the terminal is given back to our group at the end.
  // The child keeps our cwd, fds and env (plus set_env and the LD_PRELOAD prefix); its signal
  // dispositions and mask are reset to default. While it runs, SIGINT, SIGTERM, SIGHUP, SIGQUIT,
  // SIGUSR1, SIGUSR2 and SIGWINCH sent to us are forwarded to the job's group; our previous
  // dispositions and mask are restored before returning. A job stopped by SIGSTOP is waited on
  // further; one stopped by the terminal (SIGTSTP/TTIN/TTOU) while it owns the terminal stops us
  // too, and is continued when we are (what sudo does), so Ctrl-Z gives the shell its prompt back.
  // on_started(pid) is called, in this thread, once exec has succeeded and before waiting; it is
  // not called when exec fails.
  // Returns the job's ExitInfo (exec failures included, see ExitInfo::exec_error); an error
  // Status only when the job could not be started at all (empty argv, pipe/fork failure, output
  // file not creatable, Run already running) or could not be waited for.
  static Result<ExitInfo> Run(const RunSpec& spec,
                              const std::function<void(pid_t pid)>& on_started);
};

// The report of how the job ended (ipc/job_end.h) for `info`, ended now; `interrupted` as
// info's.
JobEnd JobEndFrom(const ExitInfo& info);

// The status a shell would report for the job: 124 when timed_out, else exit_code, else
// 128+signal, else 125 (no status recorded: gshare's own failure).
int ShellExitStatus(const ExitInfo& info);

// main's last act: ends this process the way the job ended. A timed-out job gives exit(124).
// When the job died from signal N,
// disables core dumps (RLIMIT_CORE 0), flushes stdio, resets N to SIG_DFL, unblocks and raises it
// ("wait and cooperative exit", so a calling shell loop stops on Ctrl-C), falling back to
// _exit(128+N) when that does not kill us; SIGKILL is sent with kill(getpid()). Otherwise
// exit(ShellExitStatus(info)).
[[noreturn]] void ExitLike(const ExitInfo& info);

}  // namespace gshare
