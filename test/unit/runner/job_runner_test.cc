// Tests for JobRunner: exit status, exec failures, environment, signal forwarding, ExitLike.
// They run real /bin/sh jobs; anything asynchronous is polled for at most kPatience.
#include "runner/job_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <doctest/doctest.h>

#include "temp_dir.h"

namespace gshare::unit_job_runner {
namespace {

constexpr auto kPatience = std::chrono::seconds(5);

// Waits until path exists and is not empty; false after kPatience.
bool WaitForFile(const std::string& path) {
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!ReadFile(path).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

RunSpec Spec(std::vector<std::string> argv,
             std::vector<std::pair<std::string, std::string>> set_env = {},
             std::vector<std::string> preload = {}) {
  RunSpec spec;
  spec.argv = std::move(argv);
  spec.set_env = std::move(set_env);
  spec.preload = std::move(preload);
  return spec;
}

ExitInfo Exited(int code) {
  ExitInfo info;
  info.exit_code = code;
  return info;
}

ExitInfo Killed(int sig) {
  ExitInfo info;
  info.signal = sig;
  return info;
}

ExitInfo RunShell(const std::string& script, RunSpec spec = {}) {
  spec.argv = {"/bin/sh", "-c", script};
  Result<ExitInfo> result = JobRunner::Run(spec, nullptr);
  REQUIRE(result.ok());
  return result.value();
}

// Forks, runs body in the child (which must end by itself) and returns its wait status.
template <typename Body>
int InChild(Body body) {
  std::fflush(nullptr);  // or the child's exit() prints doctest's buffered output again
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    body();
    _exit(99);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return status;
}

TEST_CASE("job runner passes the exit code through") {
  for (int code : {0, 3, 255}) {
    const ExitInfo info = RunShell("exit " + std::to_string(code));
    REQUIRE(info.exit_code.has_value());
    CHECK(*info.exit_code == code);
    CHECK(!info.signal.has_value());
    CHECK(info.exec_error.empty());
    CHECK(ShellExitStatus(info) == code);
  }
}

TEST_CASE("job runner reports the signal that killed the job") {
  const ExitInfo info = RunShell("kill -KILL $$");
  CHECK(!info.exit_code.has_value());
  REQUIRE(info.signal.has_value());
  CHECK(*info.signal == SIGKILL);
  CHECK(!info.core_dumped);
  CHECK(ShellExitStatus(info) == 128 + SIGKILL);
}

TEST_CASE("job runner maps a command not found to 127") {
  for (const char* command :
       {"gshare-no-such-command-4711", "/nonexistent/gshare-no-such-command"}) {
    bool started = false;
    Result<ExitInfo> result = JobRunner::Run(Spec({command}), [&](pid_t) { started = true; });
    REQUIRE(result.ok());
    CHECK(result->exit_code == 127);
    CHECK(result->exec_error == "No such file or directory");
    CHECK(!started);
  }
}

TEST_CASE("job runner maps a command that is not executable to 126") {
  TempDir dir;
  const std::string script = dir.File("script");
  std::ofstream(script) << "#!/bin/sh\nexit 0\n";
  REQUIRE(chmod(script.c_str(), 0644) == 0);
  Result<ExitInfo> result = JobRunner::Run(Spec({script}), nullptr);
  REQUIRE(result.ok());
  CHECK(result->exit_code == 126);
  CHECK(result->exec_error == "Permission denied");
}

TEST_CASE("job runner sets the environment and prefixes LD_PRELOAD") {
  TempDir dir;
  const std::string out = dir.File("env");
  const std::string script =
      "printf '%s|%s|%s\\n' \"$GSHARE_T\" \"$LD_PRELOAD\" \"$(pwd)\" > " + out;

  // Library names ld.so finds and sh loads anyway, so that preloading them prints no warnings.
  const char* saved = getenv("LD_PRELOAD");
  const std::string saved_preload = saved ? saved : "";
  unsetenv("LD_PRELOAD");
  RunShell(script, Spec({}, {{"GSHARE_T", "v1"}}, {"libc.so.6", "libm.so.6"}));
  CHECK(ReadFile(out) ==
        "v1|libc.so.6:libm.so.6|" + std::filesystem::current_path().string() + "\n");

  RunShell(script, Spec({}, {{"LD_PRELOAD", "libm.so.6"}, {"GSHARE_T", "v2"}}, {"libc.so.6"}));
  CHECK(ReadFile(out) ==
        "v2|libc.so.6:libm.so.6|" + std::filesystem::current_path().string() + "\n");

  RunShell(script, Spec({}, {{"GSHARE_T", ""}}));
  CHECK(ReadFile(out) == "||" + std::filesystem::current_path().string() + "\n");
  if (saved) setenv("LD_PRELOAD", saved_preload.c_str(), 1);
}

TEST_CASE("job runner resets the job's signals and restores ours") {
  TempDir dir;
  const std::string out = dir.File("signals");
  struct sigaction ignore = {}, old_pipe, old_term;
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old_pipe);
  sigaction(SIGTERM, &ignore, &old_term);
  sigset_t alarm, old_mask;
  sigemptyset(&alarm);
  sigaddset(&alarm, SIGALRM);
  pthread_sigmask(SIG_BLOCK, &alarm, &old_mask);

  // exec: the shell itself blocks signals for a while around its own forks and waits.
  RunShell("exec grep -E '^Sig(Ign|Blk)' /proc/self/status > " + out);
  CHECK(ReadFile(out) == "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");

  struct sigaction now;
  sigaction(SIGTERM, nullptr, &now);
  CHECK((now.sa_handler == SIG_IGN));
  sigset_t mask;
  pthread_sigmask(SIG_SETMASK, &old_mask, &mask);
  CHECK(sigismember(&mask, SIGALRM) == 1);
  CHECK(sigismember(&mask, SIGTERM) == 0);
  sigaction(SIGPIPE, &old_pipe, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
}

TEST_CASE("job runner calls on_started with the job's pid, which leads its own group") {
  TempDir dir;
  const std::string out = dir.File("pid");
  pid_t started = -1;
  pid_t group = -1;
  Result<ExitInfo> result =
      JobRunner::Run(Spec({"/bin/sh", "-c", "echo $$ > " + out}), [&](pid_t pid) {
        started = pid;
        group = getpgid(pid);
      });
  REQUIRE(result.ok());
  CHECK(result->exit_code == 0);
  CHECK(started > 0);
  CHECK(group == started);
  CHECK(ReadFile(out) == std::to_string(started) + "\n");
}

TEST_CASE("job runner forwards SIGTERM to the whole job group") {
  TempDir dir;
  const std::string got = dir.File("got"), grandchild_got = dir.File("gc"),
                    ready = dir.File("ready");
  // The job's shell and a grandchild shell both trap TERM; the grandchild says when both traps
  // are set, so the signal can't come too early.
  const std::string script = "trap 'echo got > " + got +
                             "; exit 7' TERM; sh -c 'trap \"echo gc > " + grandchild_got +
                             "; exit 0\" TERM; echo ready > " + ready + "; sleep 5 & wait' & wait";
  std::fflush(nullptr);
  const pid_t helper = fork();
  REQUIRE(helper >= 0);
  if (helper == 0) {
    Result<ExitInfo> result = JobRunner::Run(Spec({"/bin/sh", "-c", script}), nullptr);
    _exit(result.ok() ? ShellExitStatus(result.value()) : 125);
  }
  REQUIRE(WaitForFile(ready));
  REQUIRE(kill(helper, SIGTERM) == 0);
  int status = 0;
  REQUIRE(waitpid(helper, &status, 0) == helper);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 7);
  CHECK(WaitForFile(got));
  CHECK(ReadFile(got) == "got\n");
  CHECK(WaitForFile(grandchild_got));
  CHECK(ReadFile(grandchild_got) == "gc\n");
}

TEST_CASE("hostile users: a job its user interrupts through the runner ends CANCELLED") {
  TempDir dir;
  const std::string ready = dir.File("ready");
  // The helper reports the job's end as the daemon would classify it.
  auto run_and_signal = [&](int sig, const std::string& script) {
    std::remove(ready.c_str());
    std::fflush(nullptr);
    const pid_t helper = fork();
    REQUIRE(helper >= 0);
    if (helper == 0) {
      Result<ExitInfo> result = JobRunner::Run(Spec({"/bin/sh", "-c", script}), nullptr);
      if (!result.ok()) _exit(125);
      _exit(static_cast<int>(FinalStateOf(JobEndFrom(result.value()))) + 10 * result->interrupted);
    }
    REQUIRE(WaitForFile(ready));
    REQUIRE(kill(helper, sig) == 0);
    int status = 0;
    REQUIRE(waitpid(helper, &status, 0) == helper);
    REQUIRE(WIFEXITED(status));
    return WEXITSTATUS(status);
  };
  const std::string wait_for_it = "echo ready > " + ready + "; sleep 5 & wait";
  // Ctrl-C and a hang-up forwarded: CANCELLED, however the job then ends (but COMPLETED when it
  // finished its work).
  CHECK(run_and_signal(SIGINT, wait_for_it) == static_cast<int>(JobState::kCancelled) + 10);
  CHECK(run_and_signal(SIGHUP, "trap 'exit 3' HUP; " + wait_for_it) ==
        static_cast<int>(JobState::kCancelled) + 10);
  CHECK(run_and_signal(SIGINT, "trap 'exit 0' INT; " + wait_for_it) ==
        static_cast<int>(JobState::kCompleted) + 10);
  // SIGTERM is a program's request, not the terminal's: the job's own status says how it ended.
  CHECK(run_and_signal(SIGTERM, "trap 'exit 7' TERM; " + wait_for_it) ==
        static_cast<int>(JobState::kFailed));
}

TEST_CASE("hostile users: an interrupted end travels in the end report") {
  JobEnd end;
  end.signal = SIGINT;
  CHECK(FinalStateOf(end) == JobState::kFailed);
  end.interrupted = true;
  CHECK(FinalStateOf(end) == JobState::kCancelled);
  const JobEnd read = JobEndFromJson(JobEndToJson(end, 12));
  CHECK(read.interrupted);
  CHECK(FinalStateOf(read) == JobState::kCancelled);
  CHECK_FALSE(JobEndFromJson(nlohmann::json{{"signal", 2}}).interrupted);
  end.timed_out = true;  // the time limit's SIGTERM came first
  CHECK(FinalStateOf(end) == JobState::kTimeout);
}

TEST_CASE(
    "job runner hands the terminal to the job, relays its Ctrl-Z and takes the terminal back") {
  TempDir dir;
  const std::string out = dir.File("tty");
  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  REQUIRE(master >= 0);
  REQUIRE(grantpt(master) == 0);
  REQUIRE(unlockpt(master) == 0);
  const std::string slave = ptsname(master);
  // Fields 5 and 8 of /proc/PID/stat: the job's process group and the terminal's foreground one.
  // Then the job stops itself as Ctrl-Z would; the runner (a session leader, so its own stop is
  // dropped as orphaned) must continue it.
  const std::string script =
      "awk '{print $5, $8}' /proc/$$/stat > " + out + "; kill -TSTP $$; echo resumed >> " + out;
  std::fflush(nullptr);
  const pid_t helper = fork();
  REQUIRE(helper >= 0);
  if (helper == 0) {
    setsid();
    const int tty = open(slave.c_str(), O_RDWR);
    if (tty < 0 || ioctl(tty, TIOCSCTTY, 0) != 0 || dup2(tty, STDIN_FILENO) < 0) _exit(120);
    Result<ExitInfo> result = JobRunner::Run(Spec({"/bin/sh", "-c", script}), nullptr);
    if (!result.ok()) _exit(125);
    if (tcgetpgrp(STDIN_FILENO) != getpgrp()) _exit(121);
    _exit(ShellExitStatus(result.value()));
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  pid_t reaped = 0;
  while ((reaped = waitpid(helper, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (reaped == 0) kill(helper, SIGKILL), waitpid(helper, &status, 0);
  close(master);
  REQUIRE(reaped == helper);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  std::istringstream lines(ReadFile(out));
  long group = 0, foreground = -1;
  std::string resumed;
  lines >> group >> foreground >> resumed;
  CHECK(group > 0);
  CHECK(foreground == group);
  CHECK(resumed == "resumed");
}

TEST_CASE("job runner's ExitLike re-raises the job's signal or exits with its code") {
  int status = InChild([] { ExitLike(Exited(3)); });
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 3);

  for (int sig : {SIGINT, SIGTERM, SIGKILL, SIGQUIT}) {
    status = InChild([sig] {
      signal(SIGINT, SIG_IGN);  // ExitLike must override a disposition main may have left
      sigset_t all;
      sigfillset(&all);
      sigprocmask(SIG_BLOCK, &all, nullptr);
      ExitLike(Killed(sig));
    });
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == sig);
    CHECK(!WCOREDUMP(status));
  }
}

}  // namespace
}  // namespace gshare::unit_job_runner

namespace gshare::unit_job_runner {
namespace {

TEST_CASE("job runner runs a detached job: its env, directory, output file and /dev/null stdin") {
  TempDir dir;
  RunSpec spec;
  spec.env = std::vector<std::string>{"ONLY=this", "PATH=/usr/bin:/bin"};
  spec.set_env = {{"EXTRA", "x"}};
  spec.cwd = dir.path();
  spec.output_path = dir.path() + "/out.log";
  spec.stdin_null = true;
  ExitInfo info =
      RunShell("echo \"$ONLY $EXTRA ${HOME:-nohome} $(pwd)\"; echo err >&2; cat; exit 4", spec);
  CHECK(info.exit_code == 4);
  CHECK(ReadFile(spec.output_path) == "this x nohome " + dir.path() + "\nerr\n");

  spec.cwd = dir.path() + "/missing";
  info = RunShell("true", spec);
  CHECK(info.exit_code == 126);
  CHECK(info.exec_error.find("cannot change directory") == 0);
  spec.cwd.clear();
  spec.output_path = dir.path() + "/no/such/dir/out.log";
  RunSpec bad = Spec({"/bin/true"});
  bad.output_path = spec.output_path;
  CHECK_FALSE(JobRunner::Run(bad, nullptr).ok());
}

TEST_CASE("job runner ends a job at its time limit: SIGTERM, then SIGKILL after the grace") {
  RunSpec spec;
  spec.time_limit = std::chrono::milliseconds(200);
  spec.kill_after = std::chrono::milliseconds(300);
  ExitInfo info = RunShell("sleep 30", spec);  // dies of the SIGTERM
  CHECK(info.timed_out);
  CHECK(info.signal == SIGTERM);
  CHECK(ShellExitStatus(info) == 124);
  info = RunShell("trap '' TERM; sleep 30 & wait; sleep 30", spec);  // ignores it: SIGKILL
  CHECK(info.timed_out);
  CHECK(info.signal == SIGKILL);
  info = RunShell("exit 0", spec);
  CHECK_FALSE(info.timed_out);
  CHECK(ShellExitStatus(info) == 0);
}

TEST_CASE("job runner: stderr to its own file, and the files appended to or truncated") {
  TempDir dir;
  RunSpec spec;
  spec.output_path = dir.File("out");
  spec.error_path = dir.File("err");
  RunShell("echo one; echo bad >&2", spec);
  CHECK(ReadFile(spec.output_path) == "one\n");
  CHECK(ReadFile(spec.error_path) == "bad\n");
  spec.append = true;
  RunShell("echo two; echo worse >&2", spec);
  CHECK(ReadFile(spec.output_path) == "one\ntwo\n");
  CHECK(ReadFile(spec.error_path) == "bad\nworse\n");
  spec.append = false;
  spec.error_path = spec.output_path;  // -o f -e f: one file, truncated once
  RunShell("echo three; echo worst >&2", spec);
  CHECK(ReadFile(spec.output_path) == "three\nworst\n");
}

TEST_CASE(
    "job runner sends --signal's signal ahead of the time limit, to the group or B: the main "
    "process") {
  for (bool main_only : {false, true}) {
    CAPTURE(main_only);
    TempDir dir;
    RunSpec spec;
    spec.output_path = dir.File("out");
    spec.time_limit = std::chrono::milliseconds(3000);
    spec.kill_after = std::chrono::milliseconds(100);
    spec.warn_signal = SIGUSR1;
    spec.warn_before = std::chrono::milliseconds(2500);
    spec.warn_main_only = main_only;
    // The main shell and a child shell each note the signal; the main one then ends the job
    // well before the limit.
    ExitInfo info = RunShell(
        "(trap 'echo child; exit 0' USR1; while :; do sleep 0.05; done) & "
        "trap 'echo main; sleep 0.3; kill $! 2>/dev/null; exit 3' USR1; "
        "while :; do sleep 0.05; done",
        spec);
    CHECK_FALSE(info.timed_out);
    CHECK(info.exit_code == 3);
    const std::string out = ReadFile(spec.output_path);
    CHECK(out.find("main") != std::string::npos);
    CHECK((out.find("child") != std::string::npos) == !main_only);
  }
}

// True when `pid` has ended: no such process, or a zombie nobody reaped yet.
bool Ended(pid_t pid) {
  std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  return paren == std::string::npos || stat.compare(paren + 2, 1, "Z") == 0;
}

// Issue 23: a notebook server ends a kernel by SIGKILL to the group of `gshare run`, which the
// job (a group of its own) is not in.
TEST_CASE("a die_with_runner job dies with its runner, even one killed by SIGKILL") {
  for (bool die : {true, false}) {
    CAPTURE(die);
    TempDir dir;
    const std::string pid_file = dir.File("pid");
    std::fflush(nullptr);
    const pid_t runner = fork();
    REQUIRE(runner >= 0);
    if (runner == 0) {
      RunSpec spec = Spec({"/bin/sh", "-c", "echo $$ > " + pid_file + "; exec sleep 30"});
      spec.die_with_runner = die;
      Result<ExitInfo> result = JobRunner::Run(spec, nullptr);
      _exit(result.ok() ? 0 : 125);
    }
    REQUIRE(WaitForFile(pid_file));
    const pid_t job = std::stoi(ReadFile(pid_file));
    REQUIRE(kill(runner, SIGKILL) == 0);
    REQUIRE(waitpid(runner, nullptr, 0) == runner);
    if (die) {
      const auto deadline = std::chrono::steady_clock::now() + kPatience;
      while (!Ended(job) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      CHECK(Ended(job));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      CHECK_FALSE(Ended(job));  // the default: a job outlives its runner
      kill(job, SIGKILL);
    }
  }
}

}  // namespace
}  // namespace gshare::unit_job_runner
