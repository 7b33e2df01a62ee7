// `gshare slurm task-prolog|prolog|epilog`: the hooks that put Slurm's job steps under the
// system daemon (docs/slurm.md). task-prolog is Slurm's TaskProlog: run as the task's user
// before each task, it joins the step to gshare and prints the `export` lines Slurm applies
// to the task (the shim in LD_PRELOAD, the job's id and token, its GPUs). prolog and epilog
// run as root from Slurm's Prolog and Epilog: they tell the daemon a job's QOS and partition,
// and that it ended. None of them fails its Slurm hook: Slurm drains a node whose Prolog or
// Epilog fails, so every error is one line (stdout for the task, stderr for slurmd's log)
// and exit status 0; the step then runs without GPU sharing.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>

#include "base/status.h"
#include "cli/cli.h"
#include "ipc/frame_io.h"
#include "ipc/replies.h"
#include "ipc/requests.h"
#include "gshare/job_env.h"
#include "runner/launch_plan.h"
#include "runner/shim_path.h"

namespace gshare {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

// A value Slurm reads up to the end of its line: no control characters.
std::string OneLine(std::string v) {
  for (char& ch : v) {
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
  }
  return v;
}

// The GPUs Slurm gave the step, as indexes of gres.conf's order (which docs/slurm.md asks to
// be NVML's): SLURM_STEP_GPUS (an srun step), else SLURM_JOB_GPUS (the batch step), else
// CUDA_VISIBLE_DEVICES.
std::string StepGpus() {
  for (const char* name : {"SLURM_STEP_GPUS", "SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES"}) {
    std::string v = Env(name);
    if (!v.empty()) return v;
  }
  return "";
}

// One request to the daemon that `ctx` names, started by nobody: a Slurm hook never starts a
// daemon of its own.
Result<nlohmann::json> AskRunning(const ClientContext& ctx, proto::MsgType type,
                                  const nlohmann::json& request) {
  Result<int> fd = ConnectIfRunning(ctx);
  if (!fd.ok()) return fd.status();
  Result<nlohmann::json> reply = ExchangeJson(fd.value(), type, request);
  close(fd.value());
  return reply;
}

int TaskProlog(const GlobalOptions& global) {
  const std::string gpus = StepGpus();
  if (gpus.empty()) return 0;  // a step without a GPU needs no sharing
  auto say = [](const std::string& line) {
    std::printf("print gshare: %s\n", OneLine(line).c_str());
  };
  Result<ClientContext> ctx = MakeClientContext(global);
  if (!ctx.ok()) {
    say(ctx.status().message() + "; this task runs without GPU sharing");
    return 0;
  }
  const std::string shim = FindShim(ctx->self_exe);
  if (shim.empty()) {
    say("cannot find libgshare.so next to " + ctx->self_exe +
        "; this task runs without GPU sharing");
    return 0;
  }
  SlurmStepRequest req{gpus, OneLine(Env("SLURM_JOB_NAME"))};
  Result<nlohmann::json> reply = AskRunning(ctx.value(), proto::MsgType::kSlurmStep, req.ToJson());
  Result<JobIdReply> joined =
      reply.ok() ? JobIdReply::Parse(reply.value()) : Result<JobIdReply>(reply.status());
  if (!joined.ok()) {
    say(joined.status().message() + "; this task runs without GPU sharing");
    return 0;
  }
  auto put = [](const std::string& name, const std::string& value) {
    std::printf("export %s=%s\n", name.c_str(), OneLine(value).c_str());
  };
  // An srun step inherits the batch step's environment, the shim in LD_PRELOAD included.
  const std::string preload = Env("LD_PRELOAD");
  const bool preloaded = (":" + preload + ":").find(":" + shim + ":") != std::string::npos;
  put("LD_PRELOAD", preloaded ? preload : preload.empty() ? shim : shim + ":" + preload);
  LaunchPlan plan;
  plan.socket = ctx->socket_path;
  plan.job_id = joined->job_id;
  plan.job_name = req.name;
  plan.token = joined->token;
  plan.memory = ParseMemoryEngine(ctx->config.memory.engine);
  plan.visible = joined->visible;
  plan.daemon_env = joined->env;
  plan.scheduler = ctx->config.scheduler;
  const bool opted_out = [] {
    const char* v = std::getenv(job_env::kMpsOptOut);
    return v != nullptr && job_env::MpsOptOutValue(v);
  }();
  for (const auto& [name, value] : LaunchVariables(
           plan, [](const std::string& n) { return std::getenv(n.c_str()) != nullptr; },
           opted_out)) {
    put(name, value);
  }
  return 0;
}

// The job's QOS as `scontrol show job -o ID` prints it ("QOS=normal"); "" when Slurm does not
// answer. Asked only when the config maps QOS names.
std::string QosOf(int64_t job_id) {
  const std::string command = "scontrol show job -o " + std::to_string(job_id) + " 2>/dev/null";
  FILE* out = popen(command.c_str(), "r");
  if (out == nullptr) return "";
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, out)) > 0 && text.size() < (1u << 20)) text.append(buf, n);
  pclose(out);
  static const std::regex kQos(R"((?:^|\s)QOS=(\S+))");
  std::smatch m;
  if (!std::regex_search(text, m, kQos) || m[1] == "(null)") return "";
  return m[1];
}

// prolog ("begin") or epilog ("end"), from the variables Slurm sets for both.
int JobHook(const GlobalOptions& global, const std::string& action) {
  auto warn = [&action](const std::string& why) {
    std::fprintf(stderr, "gshare slurm %s: %s\n", action == "begin" ? "prolog" : "epilog",
                 OneLine(why).c_str());
    return 0;
  };
  SlurmJobRequest req;
  req.action = action;
  char* end = nullptr;
  const std::string id = Env("SLURM_JOB_ID");
  req.job_id = std::strtoll(id.c_str(), &end, 10);
  if (id.empty() || *end != '\0' || req.job_id <= 0) return warn("SLURM_JOB_ID is not set");
  const std::string uid = Env("SLURM_JOB_UID");
  req.uid = static_cast<uint32_t>(std::strtoul(uid.c_str(), &end, 10));
  if (action == "begin" && (uid.empty() || *end != '\0')) return warn("SLURM_JOB_UID is not set");
  // The rule every command follows ($GSHARE_SOCKET, else $GSHARE_SYSTEM_SOCKET or [system]
  // socket, else root's own daemon), as the task prolog follows it: a site that moved the
  // system socket says so once, for all three hooks.
  Result<ClientContext> ctx = MakeClientContext(global);
  if (!ctx.ok()) return warn(ctx.status().message());
  req.partition = OneLine(Env("SLURM_JOB_PARTITION"));
  if (action == "begin" && !ctx->config.slurm.qos_priority.empty()) req.qos = QosOf(req.job_id);
  Result<nlohmann::json> reply = AskRunning(ctx.value(), proto::MsgType::kSlurmJob, req.ToJson());
  if (!reply.ok()) return warn(reply.status().message());
  return 0;
}

}  // namespace

void AddSlurmCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  sub.require_subcommand(1);
  CLI::App* task = sub.add_subcommand(
      "task-prolog", "Slurm's TaskProlog: join the step to gshare, print its export lines");
  CLI::App* prolog =
      sub.add_subcommand("prolog", "From Slurm's Prolog (root): tell the job's QOS and partition");
  sub.add_subcommand("epilog", "From Slurm's Epilog (root): end the job's steps in gshare");
  sub.footer(
      "slurm.conf (docs/slurm.md has the whole deployment):\n"
      "  TaskProlog=/usr/lib/gshare/slurm/task-prolog   # runs gshare slurm task-prolog\n"
      "  Prolog=/usr/lib/gshare/slurm/prolog\n"
      "  Epilog=/usr/lib/gshare/slurm/epilog\n"
      "Exit status: 0, always (an error is one line; the step then runs without sharing).");
  *handler = [task, prolog, &global]() {
    if (task->parsed()) return TaskProlog(global);
    return JobHook(global, prolog->parsed() ? "begin" : "end");
  };
}

}  // namespace gshare
