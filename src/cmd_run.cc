// `gshare run [options] [--] CMD [ARGS...]`: runs CMD in the foreground as a job that
// shares the GPU under the daemon's lease. Exit status: CMD's (a signal death is re-raised),
// 125 when gshare itself fails, 126/127 when CMD cannot run / is not found.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "job_json.h"
#include "duration.h"
#include "frame_io.h"
#include "job_runner.h"

namespace gshare {
namespace {

using json = nlohmann::json;

struct RunOptions {
  std::optional<int> priority;
  std::string quantum;
  std::string name;
  std::string gpu;
  std::vector<std::string> command;
};

// libgshare.so beside the binary (build tree) or in ../lib (installed); GSHARE_SHIM wins.
std::string FindShim(const std::string& self_exe) {
  if (const char* env = std::getenv("GSHARE_SHIM"); env != nullptr && env[0] != '\0') {
    return env;
  }
  std::filesystem::path dir = std::filesystem::path(self_exe).parent_path();
  for (const auto& candidate :
       {dir / "libgshare.so", dir / ".." / "lib" / "libgshare.so",
        dir / ".." / "lib" / "gshare" / "libgshare.so"}) {
    if (std::filesystem::exists(candidate)) {
      return std::filesystem::weakly_canonical(candidate).string();
    }
  }
  return "";
}

int Fail(const std::string& message) {
  spdlog::error("{}", message);
  return kExitRunFailed;
}

int RunJob(const GlobalOptions& global, RunOptions& opt) {
  if (!opt.command.empty() && opt.command.front() == "--") opt.command.erase(opt.command.begin());
  if (opt.command.empty()) return Fail("run: no command given (usage: gshare run [options] -- CMD ...)");
  auto ctx = MakeClientContext(global);
  if (!ctx.ok()) return Fail(ctx.status().message());
  int priority = opt.priority.value_or(ctx->config.scheduler.default_priority);
  if (priority < kMinPriority || priority > kMaxPriority) {
    return Fail("run: --priority must be within [" + std::to_string(kMinPriority) + ", " +
                std::to_string(kMaxPriority) + "]");
  }
  // The job's quantum: --quantum, else the quantum of the configuration this user runs with.
  int64_t quantum_ms = ctx->config.scheduler.quantum.count();
  if (!opt.quantum.empty()) {
    auto q = ParseDuration(opt.quantum);
    if (!q.ok()) return Fail("run: --quantum: " + q.status().message());
    if (q->count() <= 0) return Fail("run: --quantum must be positive");
    quantum_ms = q->count();
  }
  std::string shim = FindShim(ctx->self_exe);
  if (shim.empty()) return Fail("cannot find libgshare.so next to " + ctx->self_exe);

  RunSpec spec;
  spec.argv = opt.command;
  spec.preload = {shim};
  spec.set_env = {{"GSHARE_SOCKET", ctx->socket_path},
                  {"GSHARE_IDLE_RELEASE_MS",
                   std::to_string(ctx->config.scheduler.idle_release.count())}};
  if (!opt.gpu.empty()) spec.set_env.push_back({"CUDA_VISIBLE_DEVICES", opt.gpu});

  int fd = -1;
  int64_t job_id = 0;
  auto conn = ConnectToDaemon(*ctx);
  if (!conn.ok()) {
    // Fail open: the job still runs, without sharing, and says so once.
    spdlog::warn("{}; running without GPU sharing", conn.status().message());
  } else {
    fd = conn.value();
    char cwd[4096];
    json req{{"name", opt.name},
             {"argv", opt.command},
             {"cwd", getcwd(cwd, sizeof cwd) != nullptr ? cwd : ""},
             {"priority", priority},
             {"quantum_ms", quantum_ms},
             {"gpu", opt.gpu},
             {"pid", getpid()}};
    auto reply = Exchange(fd, proto::MsgType::kRunRegister, ToJsonText(req));
    json r = reply.ok() ? json::parse(reply.value(), nullptr, false) : json();
    if (!reply.ok() || r.is_discarded() || !r.value("ok", false)) {
      close(fd);
      return Fail("the daemon refused the job: " +
                  (reply.ok() ? r.value("error", std::string("bad reply")) : reply.status().message()));
    }
    job_id = r.at("job_id").get<int64_t>();
    spec.set_env.push_back({"GSHARE_JOB_ID", std::to_string(job_id)});
  }
  if (fd < 0) spec.set_env.push_back({"GSHARE_QUIET", "1"});

  auto result = JobRunner::Run(spec, [fd, job_id](pid_t pid) {
    if (fd < 0) return;
    auto ack = Exchange(fd, proto::MsgType::kRunStarted, ToJsonText(json{{"job_id", job_id}, {"pid", pid}}));
    if (!ack.ok()) spdlog::debug("start not recorded: {}", ack.status().message());
  });
  if (!result.ok()) {
    if (fd >= 0) close(fd);
    return Fail(result.status().message());
  }
  const ExitInfo& info = result.value();
  if (!info.exec_error.empty()) spdlog::error("{}: {}", opt.command.front(), info.exec_error);
  if (fd >= 0) {
    json end{{"job_id", job_id},
             {"exit_code", info.exit_code ? json(*info.exit_code) : json(nullptr)},
             {"signal", info.signal ? json(*info.signal) : json(nullptr)}};
    auto ack = Exchange(fd, proto::MsgType::kRunEnded, ToJsonText(end));
    if (!ack.ok()) spdlog::debug("end not recorded: {}", ack.status().message());
    close(fd);
  }
  ExitLike(info);
}

}  // namespace

void AddRunCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  auto opt = std::make_shared<RunOptions>();
  sub.add_option("-p,--priority", opt->priority,
                 "Priority in [-1000, 1000]; higher runs first (default from config, 0)");
  sub.add_option("--quantum", opt->quantum,
                 "Time quantum of an exclusive lease, e.g. 20s, 500ms, 2m (default from config)");
  sub.add_option("-J,--name", opt->name, "Job name (default: the command)");
  sub.add_option("--gpu", opt->gpu, "GPU index or UUID (sets CUDA_VISIBLE_DEVICES)");
  sub.add_option("command", opt->command, "The command and its arguments")->required();
  sub.prefix_command();
  sub.footer(
      "Examples:\n"
      "  gshare run -- python3 train.py --lr 3e-4\n"
      "  gshare run -p 10 -J eval --quantum 5s -- python3 eval.py\n"
      "Exit status: the command's; 125 if gshare fails, 126/127 if the command cannot run\n"
      "or is not found.");
  *handler = [opt, &global]() { return RunJob(global, *opt); };
}

}  // namespace gshare
