// StartJobEndHook: the environment is built before fork; the child only calls
// async-signal-safe functions (the daemon may have threads: the checkpoint helper's).
#include "daemon/jobs/job_end_hook.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/job_state.h"
#include "base/user_name.h"
#include "runner/detached_child.h"

namespace gshare {
namespace {

std::string Seconds(const std::optional<double>& t) {
  if (!t) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", *t);
  return buf;
}

std::string Number(const std::optional<int>& v) { return v ? std::to_string(*v) : ""; }

}  // namespace

std::vector<std::string> JobEndHookEnv(const JobRecord& r, const std::string& user,
                                       const std::string& home) {
  std::string command;
  for (const std::string& a : r.argv) command += (command.empty() ? "" : " ") + a;
  std::string elapsed =
      r.start_time && r.end_time ? Seconds(*r.end_time - *r.start_time) : std::string();
  return {"PATH=/usr/bin:/bin",
          "HOME=" + home,
          "USER=" + user,
          "LOGNAME=" + user,
          "GSHARE_JOB_ID=" + std::to_string(r.id),
          "GSHARE_JOB_NAME=" + r.name,
          std::string("GSHARE_JOB_STATE=") + JobStateName(r.state),
          "GSHARE_JOB_EXIT_CODE=" + Number(r.exit_code),
          "GSHARE_JOB_SIGNAL=" + Number(r.signal),
          "GSHARE_JOB_REASON=" + r.reason,
          "GSHARE_JOB_USER=" + user,
          "GSHARE_JOB_UID=" + std::to_string(r.uid),
          "GSHARE_JOB_SUBMIT_TIME=" + Seconds(r.submit_time),
          "GSHARE_JOB_START_TIME=" + Seconds(r.start_time),
          "GSHARE_JOB_END_TIME=" + Seconds(r.end_time),
          "GSHARE_JOB_ELAPSED=" + elapsed,
          "GSHARE_JOB_COMMAND=" + command,
          "GSHARE_JOB_CWD=" + r.cwd,
          "GSHARE_JOB_OUTPUT=" + r.output,
          "GSHARE_JOB_GPU=" + r.slot,
          "GSHARE_JOB_MAIL_USER=" + r.mail_user,
          "GSHARE_JOB_MAIL_TYPE=" + r.mail_type};
}

Status StartJobEndHook(const std::string& command, const JobRecord& r, const JobIdentity& who,
                       const std::string& home) {
  std::vector<std::string> env =
      JobEndHookEnv(r, who.changes() ? who.name() : UserName(r.uid), home);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string shell = "/bin/sh", flag = "-c", text = command;
  char* argv[] = {shell.data(), flag.data(), text.data(), nullptr};
  const char* dir = r.cwd.empty() ? "/" : r.cwd.c_str();
  pid_t pid = fork();
  if (pid < 0) return Status::Error(std::string("cannot start the end hook: ") + strerror(errno));
  if (pid > 0) return Status::Ok();
  DetachChild(/*quiet=*/true);
  if (who.Become() != 0) _exit(126);
  if (chdir(dir) != 0 && chdir("/") != 0) _exit(126);
  execve(argv[0], argv, envp.data());
  _exit(127);
}

}  // namespace gshare
