// Resolving configuration and paths for a CLI command, and reaching the daemon.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "cli/cli.h"
#include "gshare/job_env.h"
#include "ipc/daemon_launcher.h"
#include "policy/access.h"
#include "ipc/daemon_record.h"
#include "ipc/frame_io.h"
#include "ipc/job_json.h"
#include "ipc/replies.h"
#include "gshare/paths.h"
#include "ipc/daemon_choice.h"

namespace gshare {

namespace {

// The paths of the daemon of `state_dir` serving `serve_socket`, checked absolute.
Status SetPaths(const std::string& serve_socket, const std::string& state_dir, ClientContext* ctx) {
  ctx->serve_socket_path = serve_socket;
  // Relative paths would mean one daemon, or one database, per working directory.
  if (ctx->serve_socket_path.empty() || ctx->serve_socket_path[0] != '/') {
    return Status::Error("the daemon's socket must be an absolute path: " + ctx->serve_socket_path);
  }
  ctx->state_dir = state_dir;
  if (ctx->state_dir.empty() || ctx->state_dir[0] != '/') {
    return Status::Error("the state directory must be an absolute path: \"" + ctx->state_dir +
                         "\"");
  }
  ctx->database_path = ctx->state_dir + "/gshare.db";
  ctx->lock_path = ctx->database_path + ".lock";
  ctx->socket_lock_path =
      (std::filesystem::path(ctx->serve_socket_path).parent_path() / "gshare.lock").string();
  ctx->record_path = DaemonRecordPath(ctx->state_dir);
  ctx->socket_path = ctx->serve_socket_path;
  ctx->daemon_log = ctx->state_dir + "/daemon.log";
  std::error_code ec;
  ctx->self_exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) return Status::Error("cannot find the gshare executable: " + ec.message());
  return Status::Ok();
}

Result<ClientContext> MakeContext(const GlobalOptions& global, bool look_for_system);

}  // namespace

Result<ClientContext> MakeClientContext(const GlobalOptions& global) {
  return MakeContext(global, /*look_for_system=*/true);
}

Result<ClientContext> MakeUserContext(const GlobalOptions& global) {
  return MakeContext(global, /*look_for_system=*/false);
}

namespace {

Result<ClientContext> MakeContext(const GlobalOptions& global, bool look_for_system) {
  ClientContext ctx;
  ctx.config_sources = DefaultConfigSources(global.config_path);
  auto config = LoadConfig(ctx.config_sources);
  if (!config.ok()) return config.status();
  ctx.config = std::move(config.value());
  if (global.config_path) ctx.config_path = *global.config_path;
  std::string explicit_socket = ctx.config.daemon.socket;
  if (explicit_socket.empty() && paths::SocketExplicit())
    explicit_socket = std::getenv(job_env::kSocket);
  char user_socket[512];
  if (!paths::SocketPath(user_socket, sizeof user_socket)) {
    return Status::Error("socket path too long");
  }
  const std::string system_socket = look_for_system ? ClientSystemSocket(ctx.config) : "";
  const std::string state_dir = StateDir(ctx.config);
  // The one daemon of this user's database, wherever it serves (started where other rules
  // applied: another XDG_RUNTIME_DIR, a config's socket). ConnectUnix checks it before use.
  const std::optional<DaemonRecord> live = ReadDaemonRecord(DaemonRecordPath(state_dir));
  DaemonProbe probe;
  probe.listener = [](const std::string& path) { return TrustedListener(path); };
  probe.own_socket = live ? live->socket : "";
  probe.me = getuid();
  DaemonChoice choice = ChooseDaemon(explicit_socket, system_socket, user_socket, probe);
  ctx.scope = choice.scope;
  ctx.own_database = choice.own_database;
  if (Status s = SetPaths(choice.socket, state_dir, &ctx); !s.ok()) return s;
  if (ctx.own_database && live) ctx.socket_path = live->socket;
  return ctx;
}

}  // namespace

Result<ClientContext> MakeSystemContext(const GlobalOptions& global) {
  ClientContext ctx;
  ctx.config_sources = SystemConfigSources(global.config_path);
  auto config = LoadConfig(ctx.config_sources);
  if (!config.ok()) return config.status();
  ctx.config = std::move(config.value());
  if (global.config_path) ctx.config_path = *global.config_path;
  ctx.scope = DaemonScope::kSystem;
  ctx.starts_system = true;
  if (Status s = SetPaths(SystemSocket(ctx.config), SystemStateDir(ctx.config), &ctx); !s.ok()) {
    return s;
  }
  if (std::optional<DaemonRecord> live = ReadDaemonRecord(ctx.record_path)) {
    ctx.socket_path = live->socket;
  }
  return ctx;
}

Result<int> ConnectIfRunning(const ClientContext& ctx) {
  Result<int> fd = ConnectUnix(ctx.socket_path);
  if (fd.ok() || ctx.socket_path == ctx.serve_socket_path) return fd;
  // The recorded daemon has just gone: try where ours would be.
  Result<int> own = ConnectUnix(ctx.serve_socket_path);
  return own.ok() ? own : fd;
}

Result<int> ConnectToDaemon(const ClientContext& ctx, std::string* serving_out) {
  // The system daemon is started by root (systemd, `gshare daemon start --system`), never on
  // a user's behalf.
  if (ctx.scope == DaemonScope::kSystem && !ctx.starts_system) {
    Result<int> fd = ConnectUnix(ctx.socket_path);
    if (fd.ok() && serving_out != nullptr) *serving_out = ctx.socket_path;
    return fd;
  }
  if (ctx.socket_path != ctx.serve_socket_path) {
    Result<int> fd = ConnectUnix(ctx.socket_path);  // the recorded daemon
    if (fd.ok()) {
      if (serving_out != nullptr) *serving_out = ctx.socket_path;
      return fd;
    }
  }
  LaunchSpec spec;
  spec.socket_path = ctx.serve_socket_path;
  spec.daemon_argv = {ctx.self_exe, "daemon", "--foreground"};
  if (ctx.starts_system) spec.daemon_argv.push_back("--system");
  if (!ctx.config_path.empty()) {
    spec.daemon_argv.push_back("--config");
    spec.daemon_argv.push_back(ctx.config_path);
  }
  spec.log_path = ctx.daemon_log;
  spec.record_path = ctx.record_path;
  std::string serving;
  Status s = DaemonLauncher::EnsureDaemon(spec, &serving);
  if (!s.ok()) return s;
  if (serving_out != nullptr) *serving_out = serving;
  return ConnectUnix(serving);
}

Result<nlohmann::json> RequestDaemon(const GlobalOptions& global, proto::MsgType type,
                                     const nlohmann::json& request, bool start,
                                     std::chrono::milliseconds timeout) {
  auto ctx = MakeClientContext(global);
  if (!ctx.ok()) return ctx.status();
  auto fd = start ? ConnectToDaemon(*ctx) : ConnectIfRunning(*ctx);
  if (!fd.ok()) return fd.status();
  Result<nlohmann::json> reply = ExchangeJson(fd.value(), type, request, timeout);
  close(fd.value());
  return reply;
}

int ExitFor(const Status& error) {
  return error.message().rfind(kPermissionDenied, 0) == 0 ? kExitDenied : kExitError;
}

int ControlJobs(const GlobalOptions& global, const JobControlRequest& request,
                const std::string& command) {
  const std::string& action = command.empty() ? request.action : command;
  // Any other failure outweighs a refusal: kExitDenied only when refusals were all that failed.
  int status = 0;
  // The daemon takes at most kMaxControlIds ids per request: a longer list goes in several,
  // in order (`gshare cancel $(seq ...)`).
  // Array tasks named J_T (exact_ids) come after the ids.
  const size_t total = request.ids.size() + request.exact_ids.size();
  size_t first = 0;
  do {
    JobControlRequest part = request;
    const size_t last = std::min(total, first + kMaxControlIds);
    part.ids.clear();
    part.exact_ids.clear();
    for (size_t i = first; i < last; ++i) {
      if (i < request.ids.size()) {
        part.ids.push_back(request.ids[i]);
      } else {
        part.exact_ids.push_back(request.exact_ids[i - request.ids.size()]);
      }
    }
    Result<nlohmann::json> reply =
        RequestDaemon(global, proto::MsgType::kJobControl, part.ToJson(), true);
    if (!reply.ok()) {
      spdlog::error("{}", reply.status().message());
      return ExitFor(reply.status());
    }
    Result<JobControlReply> outcome = JobControlReply::Parse(reply.value());
    if (!outcome.ok()) {
      spdlog::error("{}: {}", action, outcome.status().message());
      return kExitError;
    }
    for (const JobControlReply::Outcome& o : outcome->results) {
      if (o.error.empty()) continue;
      spdlog::error("{}: {}", action, o.error);
      int code = ExitFor(Status::Error(o.error));
      status = status == kExitError ? status : code;
    }
    first = last;
  } while (first < total);
  return status;
}

int JobShellStatus(const JobRecord& r) {
  if (r.state == JobState::kCompleted) return 0;
  if (r.state == JobState::kTimeout) return 124;
  if (r.state == JobState::kLost) return 125;
  if (r.signal) return 128 + *r.signal;
  if (r.state == JobState::kCancelled)
    return 128 + SIGTERM;  // whatever it exited with once asked to end
  if (r.exit_code) return *r.exit_code;
  return 125;
}

bool ColorOnStdout() {
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return isatty(STDOUT_FILENO) && (no_color == nullptr || no_color[0] == '\0') &&
         !(term != nullptr && std::string(term) == "dumb");
}

}  // namespace gshare
