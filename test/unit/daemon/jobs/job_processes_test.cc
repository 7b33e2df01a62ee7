// JobProcesses: where each user's job files live, the supervisor started with its arguments as
// the daemon's user, and signals to a job's process group or, before its pid is known, to its
// shims' processes; against real child processes.
#include "daemon/jobs/job_processes.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <thread>

#include "base/process_identity.h"
#include "daemon/child_processes.h"
#include "temp_dir.h"

namespace gshare::unit_job_processes {
namespace {

using unit_child_processes::EndSignal;
using unit_child_processes::GroupLeader;

TEST_CASE("a user's daemon keeps job files in its state dir; the system daemon per user") {
  DaemonOptions options;
  options.state_dir = "/var/lib/gshare";
  JobTable table;
  JobProcesses processes(options, table);
  CHECK(processes.FilesDir(1000) == "/var/lib/gshare");
  options.system = true;
  CHECK(processes.FilesDir(1000) == "/var/lib/gshare/users/1000");
}

TEST_CASE("the supervisor runs the daemon's binary with the job and the socket") {
  TempDir dir;
  const std::string args = dir.path() + "/args";
  const std::string exe = dir.path() + "/fake-gshare";
  {
    std::ofstream script(exe);
    script << "#!/bin/sh\necho \"$@\" > " << args << ".tmp && mv " << args << ".tmp " << args
           << "\n";
  }
  REQUIRE(chmod(exe.c_str(), 0700) == 0);
  DaemonOptions options;
  options.self_exe = exe;
  options.socket_path = dir.path() + "/gshare.sock";
  options.state_dir = dir.path();
  JobTable table;
  JobProcesses processes(options, table);
  JobRecord r;
  r.id = 7;
  r.uid = getuid();
  REQUIRE(processes.SpawnSupervisor(r).ok());
  REQUIRE(r.runner_pid.has_value());
  CHECK(*r.runner_pid > 1);
  for (int i = 0; i < 500 && access(args.c_str(), F_OK) != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::ifstream in(args);
  std::string line;
  std::getline(in, line);
  CHECK(line == "job-supervisor --job 7 --socket " + options.socket_path);
  waitpid(*r.runner_pid, nullptr, 0);
}

TEST_CASE("signals go to the job's process group, else to each of its shims") {
  DaemonOptions options;
  JobTable table;
  JobProcesses processes(options, table);
  ActiveJob job;
  CHECK_FALSE(processes.SignalGroup(job, SIGTERM));  // its pid is not known yet

  const pid_t leader = GroupLeader();
  job.record.pid = leader;
  CHECK(processes.SignalGroup(job, SIGTERM));
  CHECK(EndSignal(leader) == SIGTERM);
  CHECK_FALSE(processes.SignalGroup(job, SIGTERM));  // the group is gone

  const pid_t shim = GroupLeader();
  auto c = std::make_unique<Connection>();
  c->id = 11;
  c->pid = shim;
  table.conns[11] = std::move(c);
  job.shims.insert(11);
  processes.SignalAll(job, SIGUSR1);
  CHECK(EndSignal(shim) == SIGUSR1);
}

TEST_CASE("a job whose start was never reported is found under its own supervisor only") {
  DaemonOptions options;
  JobTable table;
  JobProcesses processes(options, table);
  // A supervisor: it starts a group-leading child, as JobRunner does, then waits for a signal.
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  const pid_t supervisor = fork();
  REQUIRE(supervisor >= 0);
  if (supervisor == 0) {
    signal(SIGTERM, SIG_DFL);
    const pid_t job = fork();
    if (job == 0) {
      setpgid(0, 0);
      pause();
      _exit(0);
    }
    setpgid(job, job);
    if (write(ready[1], &job, sizeof job) != sizeof job) _exit(1);
    pause();
    _exit(0);
  }
  pid_t job_pid = 0;
  REQUIRE(read(ready[0], &job_pid, sizeof job_pid) == sizeof job_pid);
  close(ready[0]);
  close(ready[1]);

  JobRecord r;
  r.kind = JobKind::kSubmit;
  r.runner_pid = supervisor;
  r.runner_start = ProcessStartTime(supervisor);
  REQUIRE(r.runner_start);
  CHECK(processes.UnreportedPid(r) == job_pid);
  SUBCASE("not for a supervisor the record does not name") {
    r.runner_start = *r.runner_start + 1;  // a reused pid
    CHECK_FALSE(processes.UnreportedPid(r));
  }
  SUBCASE("not once its pid is known, nor for a `gshare run` job") {
    JobRecord known = r;
    known.pid = 4242;
    CHECK_FALSE(processes.UnreportedPid(known));
    JobRecord run = r;
    run.kind = JobKind::kRun;
    CHECK_FALSE(processes.UnreportedPid(run));
  }
  kill(-job_pid, SIGKILL);
  kill(supervisor, SIGKILL);
  waitpid(supervisor, nullptr, 0);
}

}  // namespace
}  // namespace gshare::unit_job_processes
