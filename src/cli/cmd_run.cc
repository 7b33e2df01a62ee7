// `gshare run [job options] [--] CMD [ARGS...]`: runs CMD in the foreground as a job that
// shares the GPU under the daemon's lease; with --dependency, --hold or --begin it first waits,
// pending, until the queue admits it. Exit status: CMD's (a signal death is re-raised), 124
// when --time ended it, 125 when gshare itself fails, 126/127 when CMD cannot run / is not
// found. With --kernel NAME (kernel specs of `gshare kernel install` pass it) the job is a
// notebook kernel: named after the notebook, and killed with `gshare run`.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "ipc/daemon_link.h"
#include "ipc/frame_io.h"
#include "ipc/job_end.h"
#include "ipc/job_json.h"
#include "ipc/replies.h"
#include "ipc/requests.h"
#include "cli/job_options.h"
#include "cli/kernel_spec.h"
#include "cli/run_report.h"
#include "runner/launch_plan.h"
#include "runner/sharing_env.h"
#include "runner/job_runner.h"
#include "base/output_pattern.h"
#include "runner/shim_path.h"
#include "base/user_name.h"
#include "gshare/job_env.h"

extern char** environ;

namespace gshare {
namespace {

using json = nlohmann::json;

struct RunOptions {
  JobOptions job;
  std::vector<std::string> command;
  std::string kernel;  // --kernel NAME: the job is a notebook kernel (`gshare kernel install`)
  bool quiet = false;  // -q: no word on stderr about waiting (the queue, the GPU)
};

int Fail(const std::string& message) {
  spdlog::error("{}", message);
  return kExitRunFailed;
}

// Blocks until the daemon admits pending job `job_id` (kRunAdmitted), whose CUDA_VISIBLE_DEVICES
// goes to `visible` ("" to leave it). No deadline: the queue may hold it for hours, and Ctrl-C
// cancels it. Returns 0 when admitted, else the exit status: 143 when the job was cancelled,
// 125 when the daemon went away.
int WaitForAdmission(DaemonLink& link, int64_t job_id, std::string* visible, LaunchEnv* env,
                     bool quiet) {
  if (!quiet) {
    spdlog::info(
        "job {} pending (gshare queue shows why: dependencies, begin time, a hold, GPU slots)",
        job_id);
  }
  Result<Frame> frame = link.Next();
  if (frame.ok() && frame->type == proto::MsgType::kRunAdmitted) {
    json admitted = json::parse(frame->payload, nullptr, false);
    if (admitted.is_object() && admitted.value("visible", json()).is_string()) {
      *visible = admitted.at("visible").get<std::string>();
    }
    if (admitted.is_object() && admitted.contains("env")) {
      Result<LaunchEnv> launch = LaunchEnvFromJson(admitted.at("env"), "env");
      if (!launch.ok()) {
        spdlog::error("job {}: the daemon's admission: {}", job_id, launch.status().message());
        return kExitRunFailed;
      }
      *env = std::move(launch.value());
    }
    return 0;
  }
  if (frame.ok()) {
    json reply = json::parse(frame->payload, nullptr, false);
    spdlog::error("{}", reply.is_object() ? reply.value("error", std::string("refused"))
                                          : std::string("bad message from the daemon"));
    return 128 + SIGTERM;
  }
  spdlog::error("job {}: the daemon went away while it was pending", job_id);
  return kExitRunFailed;
}

int RunJob(const GlobalOptions& global, RunOptions& opt) {
  if (!opt.command.empty() && opt.command.front() == "--") opt.command.erase(opt.command.begin());
  if (opt.command.empty())
    return Fail("run: no command given (usage: gshare run [options] -- CMD ...)");
  auto ctx = MakeClientContext(global);
  if (!ctx.ok()) return Fail(ctx.status().message());
  if (!opt.kernel.empty() && opt.job.name.empty()) {
    opt.job.name = KernelJobName(std::getenv("JPY_SESSION_NAME"), opt.kernel);
  }
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  Result<JobRecord> record = ResolveJobOptions(opt.job, opt.command, ctx->config, now);
  if (!record.ok()) return Fail("run: " + record.status().message());
  std::string shim = FindShim(ctx->self_exe);
  if (shim.empty()) return Fail("cannot find libgshare.so next to " + ctx->self_exe);
  std::vector<std::string> job_env(opt.job.env);  // --env first: it overrides ours
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) job_env.emplace_back(*e);
  record->mps_isolation = MpsOptedOut(job_env);  // the daemon then makes it no MPS client

  RunSpec spec;
  spec.argv = opt.command;
  spec.preload = {shim};
  spec.cwd = opt.job.chdir.empty() ? "" : record->cwd;
  spec.time_limit = std::chrono::milliseconds(record->time_limit_ms);
  spec.kill_after = std::chrono::milliseconds(record->kill_after_ms);
  spec.warn_signal = record->warn_signal;
  spec.warn_before = std::chrono::milliseconds(record->warn_ms);
  spec.warn_main_only = record->warn_main_only;
  // The notebook server SIGKILLs the group it started, ours, to end or restart a kernel.
  spec.die_with_runner = !opt.kernel.empty();
  for (const std::string& e : opt.job.env) {
    spec.set_env.emplace_back(e.substr(0, e.find('=')), e.substr(e.find('=') + 1));
  }

  std::unique_ptr<DaemonLink> link;
  int64_t job_id = 0;  // 0: the job runs unshared (no daemon, or none that answered in time)
  std::string token;   // the job's, once registered
  LaunchPlan plan;
  plan.visible = record->gpu;  // without a daemon, the GPUs named, if any
  plan.memory = record->memory;
  plan.scheduler = ctx->config.scheduler;
  plan.socket = ctx->socket_path;
  auto conn = ConnectToDaemon(*ctx, &plan.socket);  // the socket that answered
  const bool queued = record->held || record->begin_time || !record->dependency.empty();
  if (!conn.ok()) {
    if (queued) return Fail(conn.status().message() + "; --dependency, --hold and --begin need it");
    // Fail open: the job still runs, without sharing, and says so once.
    spdlog::warn("{}; running without GPU sharing", conn.status().message());
  } else {
    link = std::make_unique<DaemonLink>(conn.value(), ReplyTimeout());
    Result<json> r =
        link->Request(proto::MsgType::kRunRegister, RunRegisterRequest{record.value()}.ToJson());
    if (!r.ok() && IsDaemonTimeout(r.status())) {
      if (queued) return Fail(r.status().message() + "; --dependency, --hold and --begin need it");
      // A hung daemon is one that cannot be reached: fail open. Its reply stays owed on the
      // connection, kept to report the end once it answers (ReportAfterRegistration).
      spdlog::warn("{}; running without GPU sharing", r.status().message());
    } else {
      Result<JobIdReply> registered =
          r.ok() ? JobIdReply::Parse(r.value()) : Result<JobIdReply>(r.status());
      if (!registered.ok()) {
        return Fail("the daemon refused the job: " + registered.status().message());
      }
      job_id = registered->job_id;
      plan.visible = registered->visible;
      plan.daemon_env = registered->env;
      if (!registered->admitted) {
        int status = WaitForAdmission(*link, job_id, &plan.visible, &plan.daemon_env, opt.quiet);
        if (status != 0) return status;
      }
      plan.job_id = job_id;
      plan.job_name = record->name;
      plan.token = registered->token;
      token = registered->token;
    }
  }
  for (auto& kv : LaunchVariables(
           plan, [&job_env](const std::string& name) { return EnvListHas(job_env, name); },
           record->mps_isolation)) {
    spec.set_env.push_back(std::move(kv));
  }
  if (job_id == 0 || opt.quiet) spec.set_env.push_back({job_env::kQuiet, "1"});
  if (!record->output.empty()) {
    spec.output_path =
        ExpandOutputPattern(record->output, job_id, record->name, UserName(getuid()));
  }
  if (!record->error.empty()) {
    spec.error_path = ExpandOutputPattern(record->error, job_id, record->name, UserName(getuid()));
  }
  spec.append = record->open_append;

  auto result = JobRunner::Run(spec, [&link, job_id](pid_t pid) {
    if (job_id == 0) return;
    // Not waited for: the job runs already, and the wait loop that forwards its signals and
    // enforces its time limit must not stand behind a daemon that is slow to answer.
    Status sent = link->Post(proto::MsgType::kRunStarted, RunStartedRequest{job_id, pid}.ToJson());
    if (!sent.ok()) spdlog::debug("start not recorded: {}", sent.message());
  });
  if (!result.ok()) return Fail(result.status().message());
  const ExitInfo& info = result.value();
  if (!info.exec_error.empty()) spdlog::error("{}: {}", opt.command.front(), info.exec_error);
  if (info.timed_out) spdlog::error("job {}: time limit reached", job_id);
  if (job_id != 0) {
    ReportEnd(*link, *ctx, job_id, token, JobEndFrom(info), opt.quiet);
  } else if (link) {
    ReportAfterRegistration(*link, JobEndFrom(info), kLateReportPatience);
  }
  ExitLike(info);
}

}  // namespace

void AddRunCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  auto opt = std::make_shared<RunOptions>();
  AddJobOptions(sub, &opt->job);
  sub.add_option("--kernel", opt->kernel, "The job is this Jupyter kernel (gshare kernel install)")
      ->group("");  // written into kernel specs, not typed
  sub.add_flag("-q,--quiet", opt->quiet,
               "Say nothing on stderr while the job waits for the queue or the GPU");
  // Not `required()`: RunJob says what is missing in its own words ("no command given").
  sub.add_option("command", opt->command, "The command and its arguments");
  sub.prefix_command();
  sub.footer(
      "Examples:\n"
      "  gshare run -- python3 train.py --lr 3e-4\n"
      "  gshare run -p 10 -J eval --quantum 5s -- python3 eval.py\n"
      "  gshare run -t 30 --after 12 -- python3 eval.py   # once job 12 COMPLETED; 30 min max\n"
      "Exit status: the command's; 124 if --time ended it; 125 if gshare fails; 126/127 if the\n"
      "command cannot run or is not found.");
  *handler = [opt, &global]() { return RunJob(global, *opt); };
}

}  // namespace gshare
