#include "job_supervisor.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "daemon_dirs.h"
#include "daemon_launcher.h"
#include "frame_io.h"
#include "job_end.h"
#include "job_json.h"
#include "job_runner.h"

namespace gshare {
namespace {

using json = nlohmann::json;

// How long the end is offered to a daemon that is down; after that the end file alone
// carries it to the next daemon.
constexpr auto kReportPatience = std::chrono::seconds(60);

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

void ReportEnd(int fd, const std::string& socket_path, const std::string& end_path,
               const JobEnd& end, int64_t job_id) {
  Status written = WriteJobEnd(end_path, end, job_id);
  if (!written.ok()) spdlog::error("job {}: {}", job_id, written.message());
  json report = JobEndToJson(end, job_id);
  if (fd >= 0 && ExchangeJson(fd, proto::MsgType::kRunEnded, report).ok()) return;
  const auto deadline = std::chrono::steady_clock::now() + kReportPatience;
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    Result<int> again = ConnectUnix(socket_path);
    if (!again.ok()) continue;
    bool sent = ExchangeJson(again.value(), proto::MsgType::kRunEnded, report).ok();
    close(again.value());
    if (sent) return;
  }
  spdlog::warn("job {}: daemon unreachable; its end waits in {}", job_id, end_path);
}

}  // namespace

int RunSupervisor(int64_t job_id, const std::string& socket_path) {
  RestoreJobUmask();  // the daemon's own (077) is not the job's
  Result<int> conn = ConnectUnix(socket_path);
  if (!conn.ok()) {
    spdlog::error("job {}: {}", job_id, conn.status().message());
    return 1;
  }
  const int fd = conn.value();
  Result<json> spec = ExchangeJson(fd, proto::MsgType::kRunAttach, json{{"job_id", job_id}});
  if (!spec.ok()) {
    spdlog::error("job {}: {}", job_id, spec.status().message());
    close(fd);
    return 1;
  }
  RunSpec run;
  std::string end_path;
  try {
    const json& s = spec.value();
    run.argv = s.at("argv").get<std::vector<std::string>>();
    run.env = s.at("env").get<std::vector<std::string>>();
    for (const auto& [key, value] : s.at("set_env").items()) {
      run.set_env.emplace_back(key, value.get<std::string>());
    }
    run.preload = s.at("preload").get<std::vector<std::string>>();
    run.cwd = s.at("cwd").get<std::string>();
    run.output_path = s.at("output").get<std::string>();
    run.stdin_null = true;
    run.time_limit = std::chrono::milliseconds(s.at("time_limit_ms").get<int64_t>());
    run.kill_after = std::chrono::milliseconds(s.at("kill_after_ms").get<int64_t>());
    end_path = s.at("end_path").get<std::string>();
    if (!s.at("script").is_null()) {
      std::string script_path = s.at("script_path").get<std::string>();
      Status st = WriteScript(script_path, s.at("script").get<std::string>());
      if (!st.ok()) {
        JobEnd failed;
        failed.error = st.message();
        ReportEnd(fd, socket_path, end_path, failed, job_id);
        close(fd);
        return 0;
      }
      run.argv.front() = script_path;  // argv[0] was the script's own path
    }
  } catch (const json::exception& e) {
    spdlog::error("job {}: bad job description: {}", job_id, e.what());
    close(fd);
    return 1;
  }

  Result<ExitInfo> result = JobRunner::Run(run, [fd, job_id](pid_t pid) {
    Result<json> ack = ExchangeJson(fd, proto::MsgType::kRunStarted, json{{"job_id", job_id}, {"pid", pid}});
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
  ReportEnd(fd, socket_path, end_path, end, job_id);
  close(fd);
  return 0;
}

}  // namespace gshare
