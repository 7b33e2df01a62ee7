#include "runner/job_supervisor.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <nlohmann/json.hpp>
#include <thread>

#include "runner/job_umask.h"
#include "ipc/daemon_launcher.h"
#include "ipc/frame_io.h"
#include "ipc/job_end.h"
#include "ipc/job_json.h"
#include "ipc/replies.h"
#include "ipc/requests.h"
#include "runner/job_runner.h"
#include "gshare/job_env.h"

namespace gshare {
namespace {

using json = nlohmann::json;

// How long the end is offered to a daemon that is down; after that the end file alone
// carries it to the next daemon.
constexpr auto kReportPatience = std::chrono::seconds(60);
// How long a new supervisor tries to attach to a daemon that is down (a restart takes well
// under a second; a daemon that stays away longer finds the job never started and queues it
// again).
constexpr auto kAttachPatience = std::chrono::seconds(60);

// Writes the script to `path` (0700) so that exec runs it with its #! interpreter.
Status WriteScript(const std::string& path, const std::string& text) {
  mkdir(path.substr(0, path.rfind('/')).c_str(), 0700);
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
  if (fd < 0) return Status::Error("cannot write " + path + ": " + strerror(errno));
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  if (!ok) return Status::Error("cannot write " + path);
  return Status::Ok();
}

// Appends a gshare message to the job's output, where its user looks for it.
void NoteInOutput(const std::string& output, const std::string& message) {
  int fd = open(output.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  std::string line = "gshare: " + message + "\n";
  ssize_t ignored = write(fd, line.data(), line.size());
  (void)ignored;
  close(fd);
}

// Waits before the next try to reach a daemon that is down or restarting: 0.25 s, doubling
// to 8 s, so that a restart is caught within a second and a long outage costs few tries.
std::chrono::milliseconds Backoff(int attempt) {
  return std::chrono::milliseconds(250) * (1 << std::min(attempt, 5));
}

// Sends `type` with `request` on a fresh connection, retrying while the daemon cannot be
// reached until `patience` runs out. Any reply ends the tries: an error reply is the
// daemon's answer, not an outage. nullopt when no daemon answered.
std::optional<Result<json>> ExchangeRetrying(const std::string& socket_path, proto::MsgType type,
                                             const json& request,
                                             std::chrono::steady_clock::duration patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  for (int attempt = 0;; ++attempt) {
    Result<int> conn = ConnectUnix(socket_path);
    if (conn.ok()) {
      Result<json> reply = ExchangeJson(conn.value(), type, request);
      close(conn.value());
      if (reply.ok() || !IsLostConnection(reply.status())) return reply;
    }
    if (std::chrono::steady_clock::now() + Backoff(attempt) > deadline) return std::nullopt;
    std::this_thread::sleep_for(Backoff(attempt));
  }
}

// `token` (the job's) proves a report on a new connection is this runner's.
void ReportEnd(int fd, const std::string& socket_path, const std::string& end_path,
               const JobEnd& end, int64_t job_id, const std::string& token) {
  Status written = WriteJobEnd(end_path, end, job_id);
  if (!written.ok()) spdlog::error("job {}: {}", job_id, written.message());
  json report = RunEndedRequest{job_id, end, token}.ToJson();
  if (fd >= 0 && ExchangeJson(fd, proto::MsgType::kRunEnded, report).ok()) return;
  if (!ExchangeRetrying(socket_path, proto::MsgType::kRunEnded, report, kReportPatience)) {
    spdlog::warn("job {}: daemon unreachable; its end waits in {}", job_id, end_path);
  }
}

}  // namespace

int RunSupervisor(int64_t job_id, const std::string& socket_path) {
  RestoreJobUmask();  // the daemon's own (077) is not the job's
  const auto start = std::chrono::steady_clock::now();
  // The daemon that started us may die before we attach: its successor re-adopts the job
  // and takes the attach, so keep trying through a restart.
  int fd = -1;
  Result<json> spec = Status::Error("the daemon did not answer");
  for (int attempt = 0; std::chrono::steady_clock::now() < start + kAttachPatience; ++attempt) {
    Result<int> conn = ConnectUnix(socket_path);
    if (conn.ok()) {
      spec =
          ExchangeJson(conn.value(), proto::MsgType::kRunAttach, RunAttachRequest{job_id}.ToJson());
      if (spec.ok()) {
        fd = conn.value();
        break;
      }
      close(conn.value());
      if (!IsLostConnection(spec.status())) break;
    } else {
      spec = conn.status();
    }
    std::this_thread::sleep_for(Backoff(attempt));
  }
  if (fd < 0) {
    spdlog::error("job {}: {}", job_id, spec.status().message());
    return 1;
  }
  Result<RunAttachReply> attached = RunAttachReply::Parse(spec.value());
  if (!attached.ok()) {
    spdlog::error("job {}: bad job description: {}", job_id, attached.status().message());
    close(fd);
    return 1;
  }
  RunAttachReply& s = attached.value();
  RunSpec run;
  std::string token;
  run.argv = std::move(s.argv);
  run.env = std::move(s.env);
  for (auto& [key, value] : s.set_env) {
    if (key == job_env::kJobToken) token = value;
    run.set_env.emplace_back(key, std::move(value));
  }
  run.preload = std::move(s.preload);
  run.cwd = std::move(s.cwd);
  run.output_path = std::move(s.output);
  run.error_path = std::move(s.error);
  run.append = s.open_append;
  run.stdin_null = true;
  run.time_limit = std::chrono::milliseconds(s.time_limit_ms);
  run.kill_after = std::chrono::milliseconds(s.kill_after_ms);
  run.warn_signal = s.warn_signal;
  run.warn_before = std::chrono::milliseconds(s.warn_ms);
  run.warn_main_only = s.warn_main_only;
  const std::string end_path = s.end_path;
  // Before anything of the job runs: from here on, a supervisor that vanishes leaves a job
  // that may have run (LOST), not one that never did (queued again).
  // A job that cannot be set up ends with the reason, reported as any end is.
  auto cannot_start = [&](const Status& why) {
    JobEnd failed;
    failed.error = why.message();
    ReportEnd(fd, socket_path, end_path, failed, job_id, token);
    close(fd);
    return 0;
  };
  if (Status marked = WriteJobStart(s.start_path); !marked.ok()) return cannot_start(marked);
  if (s.script) {
    if (Status st = WriteScript(s.script_path, *s.script); !st.ok()) return cannot_start(st);
    run.argv.front() = s.script_path;  // argv[0] was the script's own path
  }

  Result<ExitInfo> result = JobRunner::Run(run, [fd, job_id](pid_t pid) {
    Result<json> ack =
        ExchangeJson(fd, proto::MsgType::kRunStarted, RunStartedRequest{job_id, pid}.ToJson());
    if (!ack.ok()) spdlog::warn("job {}: start not recorded: {}", job_id, ack.status().message());
  });
  JobEnd end;
  if (!result.ok()) {
    end.error = result.status().message();
    spdlog::error("job {}: {}", job_id, end.error);
    NoteInOutput(run.output_path, end.error);
  } else {
    end = JobEndFrom(result.value());
    if (!result->exec_error.empty()) {
      NoteInOutput(run.output_path, run.argv.front() + ": " + result->exec_error);
    }
    if (result->timed_out) NoteInOutput(run.output_path, "time limit reached");
  }
  ReportEnd(fd, socket_path, end_path, end, job_id, token);
  close(fd);
  return 0;
}

}  // namespace gshare
