#include "daemon/jobs/job_processes.h"

#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "base/process_identity.h"
#include "daemon/jobs/job_end_hook.h"
#include "daemon/state/system_dirs.h"
#include "runner/detached_child.h"

namespace gshare {

std::string JobProcesses::FilesDir(uint32_t uid) const {
  return options_.system ? UserJobDir(options_.state_dir, uid) : options_.state_dir;
}

Result<JobIdentity> JobProcesses::SupervisorIdentity(const JobRecord& r) const {
  if (!options_.system) return JobIdentity::Keep();
  Result<JobIdentity> who =
      r.uid == getuid() ? Result<JobIdentity>(JobIdentity::Keep()) : JobIdentity::Lookup(r.uid);
  if (!who.ok()) return who.status();
  const gid_t gid = who->changes() ? who->gid() : getgid();
  if (Status s = PrepareUserJobDir(options_.state_dir, r.uid, gid); !s.ok()) return s;
  return who;
}

Status JobProcesses::SpawnSupervisor(JobRecord& record) const {
  Result<JobIdentity> who = SupervisorIdentity(record);
  if (!who.ok()) return who.status();
  std::vector<std::string> args = {options_.self_exe, "job-supervisor",
                                   "--job",           std::to_string(record.id),
                                   "--socket",        options_.socket_path};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    return Status::Error(std::string("cannot start the job supervisor: ") + strerror(errno));
  }
  if (pid == 0) {
    DetachChild(/*quiet=*/false);        // it writes its own log
    if (who->Become() != 0) _exit(126);  // never run a job as root by mistake
    execv(argv[0], argv.data());
    _exit(127);
  }
  record.runner_pid = pid;
  record.runner_start = ProcessStartTime(pid);
  return Status::Ok();
}

void JobProcesses::NotifyEnd(const JobRecord& r) const {
  if (options_.config.notify.command.empty()) return;
  Result<JobIdentity> who = SupervisorIdentity(r);
  const passwd* pw = getpwuid(r.uid);
  Status st = who.ok() ? StartJobEndHook(options_.config.notify.command, r, who.value(),
                                         pw != nullptr ? pw->pw_dir : "")
                       : who.status();
  if (!st.ok()) spdlog::warn("job {}: [notify] command not run: {}", r.id, st.message());
}

bool JobProcesses::SignalGroup(const ActiveJob& job, int sig) const {
  if (!job.record.pid || *job.record.pid <= 1) return false;
  return kill(-*job.record.pid, sig) == 0 || errno != ESRCH;
}

void JobProcesses::SignalAll(const ActiveJob& job, int sig) const {
  if (SignalGroup(job, sig)) return;
  for (ConnId c : job.shims) {
    auto it = table_.conns.find(c);
    if (it != table_.conns.end()) kill(it->second->pid, sig);
  }
}

std::optional<pid_t> JobProcesses::UnreportedPid(const JobRecord& r) const {
  if (r.pid || r.kind != JobKind::kSubmit || !r.runner_pid || !r.runner_start ||
      !SameProcessAlive(*r.runner_pid, *r.runner_start)) {
    return std::nullopt;
  }
  return GroupLeaderChild(*r.runner_pid);
}

}  // namespace gshare
