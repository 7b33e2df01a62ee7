#include "runner/job_runner.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>

extern char** environ;

namespace gshare {
namespace {

constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};
// The terminal's requests to end (Ctrl-C, a hang-up): a job ended after one was interrupted by
// its user (ExitInfo::interrupted). SIGTERM and SIGQUIT come from programs too, for their own
// reasons; `gshare cancel` is the way to cancel through them.
bool IsInterrupt(int sig) { return sig == SIGINT || sig == SIGHUP; }
constexpr int kExitNotFound = 127;
constexpr int kExitNotExecutable = 126;
constexpr int kExitOwnFailure = 125;
constexpr int kExitTimedOut = 124;  // timeout(1)

// Write end of the self-pipe, read by Run's wait loop; -1 outside Run. The handler may run in any
// thread that does not block the signal, so it only does write(2) and keeps errno.
std::atomic<int> g_wake_fd{-1};
std::atomic<bool> g_running{false};

void OnSignal(int sig) {
  const int saved_errno = errno;
  const int fd = g_wake_fd.load(std::memory_order_relaxed);
  if (fd >= 0) {
    const unsigned char byte = static_cast<unsigned char>(sig);
    ssize_t ignored = write(fd, &byte, 1);  // pipe full: a wakeup is already pending
    (void)ignored;
  }
  errno = saved_errno;
}

std::string Errno(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// The environment the job gets: ours, then set_env, then the LD_PRELOAD prefix. Built before
// fork() because the child of a multithreaded parent must not allocate.
std::vector<std::string> BuildEnv(const RunSpec& spec) {
  std::vector<std::string> env;
  if (spec.env) {
    env = *spec.env;
  } else {
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  }
  auto find = [&env](const std::string& key) {
    for (size_t i = 0; i < env.size(); ++i) {
      if (env[i].size() > key.size() && env[i].compare(0, key.size(), key) == 0 &&
          env[i][key.size()] == '=') {
        return static_cast<int>(i);
      }
    }
    return -1;
  };
  auto set = [&](const std::string& key, const std::string& value) {
    for (int i; (i = find(key)) >= 0;) env.erase(env.begin() + i);  // environ may hold duplicates
    env.push_back(key + "=" + value);
  };
  for (const auto& [key, value] : spec.set_env) set(key, value);
  if (!spec.preload.empty()) {
    std::string joined;
    for (const auto& path : spec.preload) joined += (joined.empty() ? "" : ":") + path;
    const int i = find("LD_PRELOAD");
    const std::string old = i < 0 ? "" : env[i].substr(std::strlen("LD_PRELOAD="));
    set("LD_PRELOAD", old.empty() ? joined : joined + ":" + old);
  }
  return env;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Runs in the child between fork() and exec: async-signal-safe calls only. On entry the
// forwarded signals, SIGCHLD and SIGTTOU are blocked (inherited from the parent's thread).
// What the child does before exec, prepared by the parent (the child must not allocate).
struct ChildSetup {
  const char* cwd = nullptr;  // chdir here first; a failure is reported as -errno
  int stdin_fd = -1;          // dup2'ed onto 0 when >= 0
  int output_fd = -1;         // dup2'ed onto 1, and onto 2 unless error_fd >= 0
  int error_fd = -1;          // dup2'ed onto 2 when >= 0
  pid_t die_with = 0;         // > 0: die with this parent (RunSpec::die_with_runner)
};

[[noreturn]] void ExecChild(char* const* argv, char** envp, int error_fd, bool take_tty,
                            const ChildSetup& setup) {
  setpgid(0, 0);
  if (setup.die_with > 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    // The runner may have died before prctl: then nobody would send the signal.
    if (getppid() != setup.die_with) _exit(kExitOwnFailure);
  }
  if (setup.stdin_fd >= 0) dup2(setup.stdin_fd, STDIN_FILENO);
  if (setup.output_fd >= 0) {
    dup2(setup.output_fd, STDOUT_FILENO);
    if (setup.error_fd < 0) dup2(setup.output_fd, STDERR_FILENO);
  }
  if (setup.error_fd >= 0) dup2(setup.error_fd, STDERR_FILENO);
  if (setup.cwd != nullptr && chdir(setup.cwd) != 0) {
    const int err = -errno;
    ssize_t ignored = write(error_fd, &err, sizeof err);
    (void)ignored;
    _exit(kExitNotExecutable);
  }
  // Done here as well as in the parent so that neither order of the two races matters; SIGTTOU
  // is blocked, so a call from a background group does not stop us.
  if (take_tty) tcsetpgrp(STDIN_FILENO, getpid());
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP)
      sigaction(sig, &dfl, nullptr);  // EINVAL for libc's own: fine
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  environ = envp;         // so that execvp searches the job's PATH, as env(1) does
  execvp(argv[0], argv);  // glibc runs a script without "#!" with /bin/sh (ENOEXEC)
  const int err = errno;
  ssize_t ignored = write(error_fd, &err, sizeof err);
  (void)ignored;
  _exit(kExitNotFound);
}

// Installs the forwarding handlers for the life of one Run and restores what was there before.
// Construction blocks the handled signals and SIGTTOU in this thread (so fork() can't race with
// them); Unblock() opens the handled ones again once the child exists. SIGTTOU stays blocked to
// the end so tcsetpgrp() from a background group cannot stop us.
class SignalScope {
 public:
  explicit SignalScope(int wake_fd) {
    sigset_t block;
    sigemptyset(&block);
    for (int sig : kForwardedSignals) sigaddset(&block, sig);
    sigaddset(&block, SIGCHLD);
    sigaddset(&block, SIGTTOU);
    pthread_sigmask(SIG_BLOCK, &block, &old_mask_);
    g_wake_fd.store(wake_fd);
    struct sigaction action = {};
    action.sa_handler = OnSignal;
    action.sa_flags = SA_RESTART;  // other threads' syscalls should not see EINTR because of us
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < kNumHandled; ++i) sigaction(Handled(i), &action, &old_actions_[i]);
  }
  ~SignalScope() {
    for (size_t i = 0; i < kNumHandled; ++i) sigaction(Handled(i), &old_actions_[i], nullptr);
    g_wake_fd.store(-1);
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

  void Unblock() {
    sigset_t open;
    sigemptyset(&open);
    for (size_t i = 0; i < kNumHandled; ++i) sigaddset(&open, Handled(i));
    pthread_sigmask(SIG_UNBLOCK, &open, nullptr);
  }

 private:
  static constexpr size_t kNumHandled = std::size(kForwardedSignals) + 1;  // + SIGCHLD
  static int Handled(size_t i) {
    return i < std::size(kForwardedSignals) ? kForwardedSignals[i] : SIGCHLD;
  }

  sigset_t old_mask_;
  struct sigaction old_actions_[kNumHandled];
};

// Gives the terminal back to our group when the job ends; declared after the SignalScope so it
// runs while SIGTTOU is still blocked.
class TerminalGiveBack {
 public:
  explicit TerminalGiveBack(bool active) : active_(active) {}
  ~TerminalGiveBack() {
    if (active_) tcsetpgrp(STDIN_FILENO, getpgrp());
  }
  TerminalGiveBack(const TerminalGiveBack&) = delete;
  TerminalGiveBack& operator=(const TerminalGiveBack&) = delete;

 private:
  bool active_;
};

// The job was stopped from the terminal (Ctrl-Z, or tty I/O from the background): stop ourselves
// the same way so the shell gets its prompt back; once the shell continues us, hand the terminal
// back if we are in the foreground again and continue the job.
void RelayTerminalStop(pid_t pgid) {
  tcsetpgrp(STDIN_FILENO, getpgrp());
  struct sigaction dfl = {}, old_action;
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGTSTP, &dfl, &old_action);
  sigset_t tstp, old_mask;
  sigemptyset(&tstp);
  sigaddset(&tstp, SIGTSTP);
  pthread_sigmask(SIG_UNBLOCK, &tstp, &old_mask);
  raise(SIGTSTP);  // the kernel drops it when our group is orphaned: then we go on at once
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  sigaction(SIGTSTP, &old_action, nullptr);
  if (tcgetpgrp(STDIN_FILENO) == getpgrp()) tcsetpgrp(STDIN_FILENO, pgid);
  kill(-pgid, SIGCONT);
}

// Forwards the signals the handler noted to the job's group; *interrupted is set when one of
// them was an interrupt (IsInterrupt).
void ForwardPending(int wake_fd, pid_t pgid, bool* interrupted) {
  unsigned char bytes[64];
  ssize_t n;
  while ((n = read(wake_fd, bytes, sizeof bytes)) > 0) {
    for (ssize_t i = 0; i < n; ++i) {
      if (bytes[i] == SIGCHLD) continue;
      kill(-pgid, bytes[i]);  // ESRCH once the group is gone: fine
      if (IsInterrupt(bytes[i])) *interrupted = true;
    }
  }
}

pid_t WaitEintr(pid_t pid, int* status, int flags) {
  pid_t r;
  do {
    r = waitpid(pid, status, flags);
  } while (r < 0 && errno == EINTR);
  return r;
}

}  // namespace

Result<ExitInfo> JobRunner::Run(const RunSpec& spec,
                                const std::function<void(pid_t pid)>& on_started) {
  if (spec.argv.empty()) return Status::Error("no command to run");
  bool idle = false;
  if (!g_running.compare_exchange_strong(idle, true)) {
    return Status::Error("JobRunner::Run is already running in this process");
  }
  struct Release {
    ~Release() { g_running.store(false); }
  } release;

  std::vector<std::string> args = spec.argv;
  std::vector<std::string> env = BuildEnv(spec);
  std::vector<char*> argv = CStrings(args);
  std::vector<char*> envp = CStrings(env);

  int wake[2];
  if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) return Status::Error(Errno("pipe"));
  struct ClosePipe {
    int* fds;
    ~ClosePipe() { CloseFd(fds[0]), CloseFd(fds[1]); }
  } close_wake{wake};
  int exec_status[2];
  if (pipe2(exec_status, O_CLOEXEC) != 0) return Status::Error(Errno("pipe"));
  ClosePipe close_exec_status{exec_status};

  struct OwnedFd {
    int fd = -1;
    ~OwnedFd() { CloseFd(fd); }
  } stdin_null, output, error;
  ChildSetup setup;
  if (!spec.cwd.empty()) setup.cwd = spec.cwd.c_str();
  if (spec.die_with_runner) setup.die_with = getpid();
  if (spec.stdin_null) {
    stdin_null.fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (stdin_null.fd < 0) return Status::Error(Errno("/dev/null"));
    setup.stdin_fd = stdin_null.fd;
  }
  const int file_flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (spec.append ? 0 : O_TRUNC);
  if (!spec.output_path.empty()) {
    output.fd = open(spec.output_path.c_str(), file_flags, 0644);
    if (output.fd < 0)
      return Status::Error(Errno(("cannot open output file " + spec.output_path).c_str()));
    setup.output_fd = output.fd;
  }
  // The same file for both (-o f -e f): one open, or the truncation would come twice.
  if (!spec.error_path.empty() && spec.error_path != spec.output_path) {
    error.fd = open(spec.error_path.c_str(), file_flags, 0644);
    if (error.fd < 0)
      return Status::Error(Errno(("cannot open error file " + spec.error_path).c_str()));
    setup.error_fd = error.fd;
  }

  const bool take_tty =
      !spec.stdin_null && isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
  SignalScope signals(wake[1]);
  const pid_t pid = fork();
  if (pid < 0) return Status::Error(Errno("fork"));
  if (pid == 0) ExecChild(argv.data(), envp.data(), exec_status[1], take_tty, setup);

  TerminalGiveBack give_back(take_tty);
  CloseFd(exec_status[1]);
  setpgid(pid, pid);  // EACCES once the child has exec'd: it did this itself then
  if (take_tty) tcsetpgrp(STDIN_FILENO, pid);
  signals.Unblock();  // signals that came meanwhile are in the pipe and get forwarded below

  // The pipe is closed by exec (CLOEXEC) or carries the child's errno when exec failed.
  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(exec_status[0], &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  int status = 0;
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    WaitEintr(pid, &status, 0);
    ExitInfo info;
    if (exec_errno < 0) {
      info.exit_code = kExitNotExecutable;
      info.exec_error =
          "cannot change directory to " + spec.cwd + ": " + std::strerror(-exec_errno);
    } else {
      info.exit_code = exec_errno == ENOENT ? kExitNotFound : kExitNotExecutable;
      info.exec_error = std::strerror(exec_errno);
    }
    return info;
  }

  if (on_started) on_started(pid);
  // Without the terminal, a stop is none of our business (the daemon may SIGSTOP jobs); with it,
  // WUNTRACED lets us relay a Ctrl-Z to the shell. Either way only an exit or a kill ends the wait.
  const int flags = WNOHANG | (take_tty ? WUNTRACED : 0);
  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> warn_at, term_at, kill_at;
  if (spec.time_limit.count() > 0) {
    term_at = Clock::now() + spec.time_limit;
    if (spec.warn_signal > 0) warn_at = *term_at - spec.warn_before;
  }
  bool timed_out = false;
  bool interrupted = false;
  for (;;) {
    const pid_t r = waitpid(pid, &status, flags);
    if (r == pid) {
      if (!WIFSTOPPED(status)) break;
      const int sig = WSTOPSIG(status);
      if (sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) RelayTerminalStop(pid);
      continue;
    }
    if (r < 0 && errno != EINTR) return Status::Error(Errno("waitpid"));
    // The time limit, as timeout(1) enforces it: SIGTERM to the group, SIGKILL after the grace.
    const auto now = Clock::now();
    if (warn_at && now >= *warn_at) {
      kill(spec.warn_main_only ? pid : -pid, spec.warn_signal);
      warn_at.reset();
    }
    if (term_at && now >= *term_at) {
      timed_out = true;
      kill(-pid, SIGTERM);
      kill(-pid, SIGCONT);  // a stopped job must be able to act on the SIGTERM
      term_at.reset();
      kill_at = now + spec.kill_after;
    } else if (kill_at && now >= *kill_at) {
      kill(-pid, SIGKILL);
      kill_at.reset();
    }
    // SIGCHLD writes to the pipe too, so this cannot sleep through the job's end; the timeout is
    // only a safety net, or the next time-limit step.
    int timeout_ms = 1000;
    for (const auto& at : {warn_at, term_at, kill_at}) {
      if (at) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(*at - now).count();
        timeout_ms = static_cast<int>(std::clamp<int64_t>(left, 0, timeout_ms));
      }
    }
    struct pollfd p = {wake[0], POLLIN, 0};
    poll(&p, 1, timeout_ms);
    ForwardPending(wake[0], pid, &interrupted);
  }

  ExitInfo info;
  info.timed_out = timed_out;
  if (WIFEXITED(status)) {
    info.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    info.signal = WTERMSIG(status);
    info.core_dumped = WCOREDUMP(status);
  }
  info.interrupted = interrupted || (take_tty && info.signal && IsInterrupt(*info.signal));
  return info;
}

int ShellExitStatus(const ExitInfo& info) {
  if (info.timed_out) return kExitTimedOut;
  if (info.exit_code) return *info.exit_code;
  if (info.signal) return 128 + *info.signal;
  return kExitOwnFailure;
}

void ExitLike(const ExitInfo& info) {
  if (!info.timed_out && !info.exit_code && info.signal) {
    const int sig = *info.signal;
    // Dying from SIGQUIT/SIGSEGV/... must not leave a core of gshare beside the job's.
    struct rlimit core;
    if (getrlimit(RLIMIT_CORE, &core) == 0) {
      core.rlim_cur = 0;
      setrlimit(RLIMIT_CORE, &core);
    }
    std::fflush(nullptr);  // no atexit handlers run on a signal death
    if (sig == SIGKILL) {
      kill(getpid(), SIGKILL);
    } else if (sig != SIGSTOP) {
      struct sigaction dfl = {};
      dfl.sa_handler = SIG_DFL;
      sigemptyset(&dfl.sa_mask);
      sigaction(sig, &dfl, nullptr);
      sigset_t one;
      sigemptyset(&one);
      sigaddset(&one, sig);
      pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
      raise(sig);  // delivered before raise() returns: we die here unless its default is ignore
    }
    _exit(128 + sig);
  }
  std::exit(ShellExitStatus(info));
}

JobEnd JobEndFrom(const ExitInfo& info) {
  JobEnd end;
  end.exit_code = info.exit_code;
  end.signal = info.signal;
  end.timed_out = info.timed_out;
  end.interrupted = info.interrupted;
  end.end_time =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  return end;
}

}  // namespace gshare
