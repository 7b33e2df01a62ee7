// Real child processes for the tests of the daemon's parts that signal jobs: a process group
// leader that waits for signals, and its end as the signal that ended it. Test threads only.
#pragma once

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace gshare::unit_child_processes {

// A child that leads its own process group and waits for signals with the default handlers
// (not the test runner's), ignoring SIGTERM when `ignore_term` (a job that traps it); it is
// ready when this returns. Reap it with EndSignal.
inline pid_t GroupLeader(bool ignore_term = false) {
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    setpgid(0, 0);
    signal(SIGTERM, ignore_term ? SIG_IGN : SIG_DFL);
    signal(SIGUSR1, SIG_DFL);
    if (write(ready[1], "r", 1) != 1) _exit(1);
    for (;;) pause();
  }
  char c = 0;
  REQUIRE(read(ready[0], &c, 1) == 1);
  close(ready[0]);
  close(ready[1]);
  return pid;
}

// The signal that ended child `pid`, 0 when it exited, -1 when it still ran after `patience`
// (then it is killed).
inline int EndSignal(pid_t pid, std::chrono::milliseconds patience = std::chrono::seconds(5)) {
  int status = 0;
  for (auto waited = std::chrono::milliseconds(0); waited < patience;
       waited += std::chrono::milliseconds(10)) {
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

}  // namespace gshare::unit_child_processes
