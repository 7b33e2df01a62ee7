#include "runner/detached_child.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <initializer_list>

namespace gshare {

void DetachChild(bool quiet) noexcept {
  setsid();
  for (int sig : {SIGCHLD, SIGPIPE, SIGHUP, SIGTERM, SIGINT}) signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  int null_fd = open("/dev/null", quiet ? O_RDWR : O_RDONLY);
  if (null_fd < 0) return;
  dup2(null_fd, STDIN_FILENO);
  if (quiet) {
    dup2(null_fd, STDOUT_FILENO);
    dup2(null_fd, STDERR_FILENO);
  }
  if (null_fd > STDERR_FILENO) close(null_fd);
}

}  // namespace gshare
