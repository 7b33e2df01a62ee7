#include "ipc/daemon_launcher.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <thread>

#include "base/unique_fd.h"
#include "ipc/daemon_record.h"
#include "ipc/socket_trust.h"

namespace gshare {
namespace {

constexpr int kFirstFreeFd = 3;
constexpr int kFallbackMaxFd = 65536;
constexpr auto kConnectRetryPause = std::chrono::milliseconds(20);
// The messages IsDaemonUnreachable recognizes.
constexpr const char* kCannotConnect = "cannot connect to ";
constexpr const char* kDidNotStart = "the daemon did not start";

std::string ErrnoText(const std::string& what) { return what + ": " + std::strerror(errno); }

// Moves fd to a number >= 3 (keeping CLOEXEC) so that dup2() onto 0-2 in the child can't clobber
// it; it can be low when our caller runs with stdin/stdout/stderr closed.
Status MoveAboveStdio(UniqueFd& fd) {
  if (fd.get() >= kFirstFreeFd) return Status::Ok();
  const int moved = fcntl(fd.get(), F_DUPFD_CLOEXEC, kFirstFreeFd);
  if (moved < 0) return Status::Error(ErrnoText("fcntl"));
  fd.Reset(moved);
  return Status::Ok();
}

// mkdir -p with mode 0700 for the directories that are missing; existing ones are left alone.
Status MakeParentDirs(const std::string& path) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::filesystem::path partial;
  for (const auto& part : dir) {
    partial /= part;
    if (mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST) {
      return Status::Error(ErrnoText("cannot create " + partial.string()));
    }
  }
  return Status::Ok();
}

// Child side (after fork): async-signal-safe calls only.
void CloseFdsExcept(int keep) {
#ifdef SYS_close_range
  bool closed = true;
  if (keep > kFirstFreeFd) closed = syscall(SYS_close_range, kFirstFreeFd, keep - 1, 0) == 0;
  if (closed && syscall(SYS_close_range, keep + 1, ~0U, 0) == 0) return;
#endif
  // Kernels before 5.9 have no close_range: walk the table.
  struct rlimit limit;
  long max_fd = kFallbackMaxFd;
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      limit.rlim_cur < kFallbackMaxFd) {
    max_fd = static_cast<long>(limit.rlim_cur);
  }
  for (int fd = kFirstFreeFd; fd < max_fd; ++fd) {
    if (fd != keep) close(fd);
  }
}

// The daemon (grandchild): stdio redirected, only the ready fd left open, signals as fresh.
[[noreturn]] void ExecDaemon(char* const* argv, char* const* envp, int null_fd, int log_fd,
                             int ready_fd) {
  dup2(null_fd, STDIN_FILENO);
  dup2(log_fd, STDOUT_FILENO);
  dup2(log_fd, STDERR_FILENO);
  CloseFdsExcept(ready_fd);
  fcntl(ready_fd, F_SETFD, 0);  // it must survive exec
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execvpe(argv[0], argv, envp);
  _exit(127);  // the launcher sees EOF on the ready pipe and reports it
}

// Reads the daemon's one ready byte. Returns it, or 0 on EOF or when the deadline passes.
char ReadReadyByte(int fd, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return 0;
    struct pollfd p = {fd, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(left.count()) + 1);
    if (ready < 0 && errno != EINTR) return 0;
    if (ready <= 0) continue;
    char byte = 0;
    const ssize_t n = read(fd, &byte, 1);
    if (n == 1) return byte;
    if (n == 0 || errno != EINTR) return 0;
  }
}

// ConnectUnix, telling apart a daemon that cannot be trusted (*untrusted set) from one that
// is not there: the first is an error to report at once, the second a reason to start one.
Result<int> ConnectTrusted(const std::string& path, bool* untrusted) {
  *untrusted = false;
  struct sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) {
    return Status::Error("socket path is empty or too long: " + path);
  }
  // Nothing is sent to a daemon someone else could have put there (issue 27).
  if (Status trusted = CheckSocketPath(path); !trusted.ok()) {
    *untrusted = true;
    return trusted;
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  for (;;) {
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return Status::Error(ErrnoText("socket"));
    if (connect(fd, reinterpret_cast<const struct sockaddr*>(&addr), sizeof addr) == 0) {
      if (Status peer = CheckPeer(fd, path); !peer.ok()) {
        close(fd);
        *untrusted = true;
        return peer;
      }
      return fd;
    }
    const int err = errno;
    close(fd);
    // An interrupted connect goes on in the background; starting over is simpler than polling it.
    if (err != EINTR) return Status::Error(kCannotConnect + path + ": " + std::strerror(err));
  }
}

}  // namespace

bool IsDaemonUnreachable(const Status& error) {
  const std::string& m = error.message();
  return m.rfind(kCannotConnect, 0) == 0 || m.rfind(kDidNotStart, 0) == 0;
}

Result<int> ConnectUnix(const std::string& path) {
  bool untrusted = false;
  return ConnectTrusted(path, &untrusted);
}

std::optional<uid_t> TrustedListener(const std::string& path) {
  Result<int> fd = ConnectUnix(path);
  if (!fd.ok()) return std::nullopt;
  struct ucred cred = {};
  socklen_t len = sizeof cred;
  const bool known = getsockopt(fd.value(), SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0;
  close(fd.value());
  if (!known) return std::nullopt;
  return cred.uid;
}

Status DaemonLauncher::EnsureDaemon(const LaunchSpec& spec, std::string* serving) {
  const auto deadline = std::chrono::steady_clock::now() + spec.timeout;
  std::string ignored_path;
  if (serving == nullptr) serving = &ignored_path;
  *serving = spec.socket_path;
  bool untrusted = false;
  if (Result<int> fd = ConnectTrusted(spec.socket_path, &untrusted); fd.ok()) {
    close(fd.value());
    return Status::Ok();
  } else if (untrusted) {
    return fd.status();
  }
  if (spec.daemon_argv.empty()) return Status::Error("no command to start the daemon with");
  const std::string did_not_start = kDidNotStart + (" (see " + spec.log_path + ")");

  // Everything the child needs is made here: after fork() a multithreaded parent's child may
  // not allocate.
  UniqueFd null_fd(open("/dev/null", O_RDWR | O_CLOEXEC));
  if (null_fd.get() < 0) return Status::Error(ErrnoText("/dev/null"));
  UniqueFd log_fd;
  if (spec.log_path.empty()) {
    log_fd.Reset(fcntl(null_fd.get(), F_DUPFD_CLOEXEC, kFirstFreeFd));
  } else {
    if (Status made = MakeParentDirs(spec.log_path); !made.ok()) return made;
    log_fd.Reset(open(spec.log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600));
  }
  if (log_fd.get() < 0) return Status::Error(ErrnoText("cannot open " + spec.log_path));
  UniqueFd ready_read, ready_write;
  {
    int ready[2];
    if (pipe2(ready, O_CLOEXEC) != 0) return Status::Error(ErrnoText("pipe"));
    ready_read.Reset(ready[0]);
    ready_write.Reset(ready[1]);
  }
  for (UniqueFd* fd : {&null_fd, &log_fd, &ready_write}) {
    if (Status moved = MoveAboveStdio(*fd); !moved.ok()) return moved;
  }
  std::vector<std::string> args = spec.daemon_argv;
  args.push_back("--ready-fd");
  args.push_back(std::to_string(ready_write.get()));
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  // Our environment without LD_PRELOAD: the daemon outlives the job that started it and must
  // not carry that job's preloads (the shim, a profiler) for its whole life.
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "LD_PRELOAD=", 11) != 0) envp.push_back(*e);
  }
  envp.push_back(nullptr);

  const pid_t child = fork();
  if (child < 0) return Status::Error(ErrnoText("fork"));
  if (child == 0) {
    // A new session keeps the daemon away from our terminal and its signals; the second fork
    // makes it a non-leader that can never get a controlling terminal back, and lets init adopt it.
    setsid();
    const pid_t daemon = fork();
    if (daemon == 0)
      ExecDaemon(argv.data(), envp.data(), null_fd.get(), log_fd.get(), ready_write.get());
    _exit(daemon < 0 ? 1 : 0);
  }
  // Our copy of the write end must go, or EOF would never come when the daemon dies.
  ready_write.Reset();
  null_fd.Reset();
  log_fd.Reset();
  int status = 0;
  pid_t reaped;
  do {
    reaped = waitpid(child, &status, 0);
  } while (reaped < 0 && errno == EINTR);
  if (reaped == child && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    return Status::Error("cannot fork the daemon: " + did_not_start);
  }

  const char byte = ReadReadyByte(ready_read.get(), deadline);
  if (byte != 'R' && byte != 'B') return Status::Error(did_not_start);
  // 'R': ours listens. 'B': another daemon holds the lock and may still be starting up; it
  // serves the database on the socket its record names once it listens.
  for (;;) {
    if (byte == 'B' && !spec.record_path.empty()) {
      if (std::optional<DaemonRecord> live = ReadDaemonRecord(spec.record_path))
        *serving = live->socket;
    }
    if (Result<int> fd = ConnectTrusted(*serving, &untrusted); fd.ok()) {
      close(fd.value());
      return Status::Ok();
    } else if (untrusted) {
      return fd.status();
    }
    if (std::chrono::steady_clock::now() >= deadline) return Status::Error(did_not_start);
    std::this_thread::sleep_for(kConnectRetryPause);
  }
}

}  // namespace gshare
