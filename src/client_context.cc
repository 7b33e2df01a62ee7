// Resolving configuration and paths for a CLI command, and reaching the daemon.
#include <unistd.h>

#include <filesystem>

#include "cli.h"
#include "daemon_launcher.h"
#include "frame_io.h"
#include "job_json.h"
#include "gshare/paths.h"

namespace gshare {

Result<ClientContext> MakeClientContext(const GlobalOptions& global) {
  ClientContext ctx;
  auto config = LoadConfig(DefaultConfigSources(global.config_path));
  if (!config.ok()) return config.status();
  ctx.config = std::move(config.value());
  if (global.config_path) ctx.config_path = *global.config_path;
  if (!ctx.config.daemon.socket.empty()) {
    ctx.socket_path = ctx.config.daemon.socket;
  } else {
    char path[512];
    if (!paths::SocketPath(path, sizeof path)) return Status::Error("socket path too long");
    ctx.socket_path = path;
  }
  ctx.lock_path =
      (std::filesystem::path(ctx.socket_path).parent_path() / "gshare.lock").string();
  ctx.state_dir = StateDir(ctx.config);
  ctx.database_path = ctx.state_dir + "/gshare.db";
  ctx.daemon_log = ctx.state_dir + "/daemon.log";
  std::error_code ec;
  ctx.self_exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) return Status::Error("cannot find the gshare executable: " + ec.message());
  return ctx;
}

Result<int> ConnectIfRunning(const ClientContext& ctx) { return ConnectUnix(ctx.socket_path); }

Result<int> ConnectToDaemon(const ClientContext& ctx) {
  LaunchSpec spec;
  spec.socket_path = ctx.socket_path;
  spec.daemon_argv = {ctx.self_exe, "daemon", "--foreground"};
  if (!ctx.config_path.empty()) {
    spec.daemon_argv.push_back("--config");
    spec.daemon_argv.push_back(ctx.config_path);
  }
  spec.log_path = ctx.daemon_log;
  Status s = DaemonLauncher::EnsureDaemon(spec);
  if (!s.ok()) return s;
  return ConnectUnix(ctx.socket_path);
}

Result<nlohmann::json> RequestDaemon(const GlobalOptions& global, proto::MsgType type,
                                     const nlohmann::json& request, bool start) {
  auto ctx = MakeClientContext(global);
  if (!ctx.ok()) return ctx.status();
  auto fd = start ? ConnectToDaemon(*ctx) : ConnectIfRunning(*ctx);
  if (!fd.ok()) return fd.status();
  auto reply = Exchange(fd.value(), type, ToJsonText(request));
  close(fd.value());
  if (!reply.ok()) return reply.status();
  nlohmann::json j = nlohmann::json::parse(reply.value(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::Error("bad reply from the daemon");
  if (!j.value("ok", false)) {
    return Status::Error(j.value("error", std::string("the daemon refused the request")));
  }
  return j;
}

}  // namespace gshare
