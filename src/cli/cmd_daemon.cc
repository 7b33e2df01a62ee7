// `gshare daemon [start|stop|install-service] [--foreground] [--system]`: the arbiter. `start`
// (the default) starts it detached unless one answers; `--foreground` serves in this process
// (systemd, debugging; exit 3 when another daemon serves its database or socket); `stop` asks
// a running daemon to exit; `install-service` writes a systemd unit. `--system`: the machine's
// daemon serving every user (root only, exit 4 otherwise), with its own config and paths.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli/service_unit.h"
#include "daemon/daemon.h"
#include "ipc/frame_io.h"
#include "base/logging.h"
#include "ipc/socket_trust.h"

namespace gshare {
namespace {

struct DaemonCmdOptions {
  std::string action = "start";
  bool foreground = false;
  bool system = false;
  int ready_fd = -1;
};

int Serve(const ClientContext& ctx, int ready_fd) {
  // "info" is the default: leave -v's debug alone.
  if (ctx.config.daemon.log_level != "info") ApplyLogLevel(ctx.config.daemon.log_level);
  DaemonOptions options;
  options.config = ctx.config;
  // Stamped after the config was read: a file changed in between reads as unchanged until
  // its next change.
  options.config_files = StampConfigFiles(ctx.config_sources);
  options.socket_path = ctx.serve_socket_path;  // not a live daemon's: that one would say busy
  options.lock_path = ctx.lock_path;
  options.socket_lock_path = ctx.socket_lock_path;
  options.record_path = ctx.record_path;
  options.database_path = ctx.database_path;
  options.state_dir = ctx.state_dir;
  options.self_exe = ctx.self_exe;
  options.system = ctx.starts_system;
  Daemon daemon(std::move(options));
  Status s = daemon.Run(ready_fd);
  if (daemon.busy()) {
    // The launcher's race (ready fd) is expected and its loser says so quietly.
    if (ready_fd >= 0) {
      spdlog::info("{}", s.message());
    } else {
      spdlog::error("{}", s.message());
    }
    return kExitDaemonBusy;
  }
  if (!s.ok()) {
    spdlog::error("{}", s.message());
    return kExitError;
  }
  return 0;
}

// Writes a systemd unit that runs the daemon in the foreground: for --system
// /etc/systemd/system/gshare.service, else a user unit (systemd's user manager sets
// XDG_RUNTIME_DIR, so the unit's daemon serves the socket every shell resolves).
int InstallService(const ClientContext& ctx, bool system) {
  std::filesystem::path dir;
  if (system) {
    dir = "/etc/systemd/system";
  } else {
    const char* xdg = std::getenv("XDG_CONFIG_HOME");
    const char* home = std::getenv("HOME");
    dir = (xdg != nullptr && xdg[0] == '/')
              ? std::filesystem::path(xdg)
              : std::filesystem::path(home != nullptr ? home : "/") / ".config";
    dir /= "systemd/user";
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::filesystem::path unit = dir / "gshare.service";
  std::ofstream out(unit);
  out << ServiceUnitText(ServiceExecStart(ctx.self_exe, ctx.config_path, system), system,
                         kExitDaemonBusy);
  out.close();
  if (!out) {
    spdlog::error("cannot write {}", unit.string());
    return kExitError;
  }
  std::printf("%s\n", unit.c_str());
  spdlog::info(system ? "enable it with: systemctl daemon-reload && systemctl enable --now gshare"
                      : "enable it with: systemctl --user daemon-reload && systemctl --user "
                        "enable --now gshare");
  return 0;
}

int RunDaemonCommand(const GlobalOptions& global, const DaemonCmdOptions& opt) {
  if (opt.system && geteuid() != 0) {
    spdlog::error(
        "the system daemon is root's to {}: run it as root (sudo gshare daemon ... --system)",
        opt.foreground ? "serve" : opt.action);
    return kExitNotRoot;
  }
  auto ctx = opt.system       ? MakeSystemContext(global)
             : opt.foreground ? MakeUserContext(global)
                              : MakeClientContext(global);
  if (!ctx.ok()) {
    spdlog::error("{}", ctx.status().message());
    return kExitError;
  }
  if (opt.action == "stop") {
    // A plain `stop` means the user's own daemon, never the machine's by accident.
    if (!opt.system && ctx->scope == DaemonScope::kSystem) {
      spdlog::error("the system daemon serves {}; stop it with: sudo gshare daemon stop --system",
                    ctx->socket_path);
      return kExitError;
    }
    // A daemon that cannot be trusted is not "not running": say what is wrong.
    if (Status trusted = CheckSocketPath(ctx->socket_path); !trusted.ok()) {
      spdlog::error("{}", trusted.message());
      return kExitError;
    }
    auto probe = ConnectIfRunning(*ctx);
    if (!probe.ok()) {
      spdlog::info("no daemon is running at {}", ctx->socket_path);
      return 0;
    }
    close(probe.value());
    auto conn = ConnectIfRunning(*ctx);
    if (!conn.ok()) {
      spdlog::error("{}", conn.status().message());
      return kExitError;
    }
    auto reply = ExchangeJson(conn.value(), proto::MsgType::kShutdown, nlohmann::json::object());
    close(conn.value());
    if (!reply.ok()) {
      spdlog::error("{}", reply.status().message());
      return kExitError;
    }
    return 0;
  }
  if (opt.action == "install-service") return InstallService(*ctx, opt.system);
  if (opt.foreground) return Serve(*ctx, opt.ready_fd);
  std::string serving;
  auto fd = ConnectToDaemon(*ctx, &serving);
  if (!fd.ok()) {
    spdlog::error("{}", fd.status().message());
    return kExitError;
  }
  close(fd.value());
  spdlog::info("{} daemon running at {}", DaemonScopeName(ctx->scope), serving);
  return 0;
}

}  // namespace

void AddDaemonCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  auto opt = std::make_shared<DaemonCmdOptions>();
  sub.add_option("action", opt->action, "start (default), stop or install-service")
      ->check(CLI::IsMember({"start", "stop", "install-service"}));
  sub.add_flag("--foreground", opt->foreground, "Serve in this process (for systemd)");
  sub.add_flag("--system", opt->system,
               "The machine's daemon for every user (root; /etc/gshare/gshare.toml)");
  sub.add_option("--ready-fd", opt->ready_fd, "Write R (serving) or B (busy) to this fd")
      ->group("");  // internal: the launcher's readiness handshake
  sub.footer(
      "Examples:\n  gshare daemon            # start it (normally automatic)\n"
      "  gshare daemon --foreground\n  gshare daemon stop\n"
      "  gshare daemon install-service && systemctl --user enable --now gshare\n"
      "  sudo gshare daemon install-service --system && sudo systemctl enable --now gshare\n"
      "  sudo gshare daemon start --system    # without systemd\n"
      "Exit status: 0, 1 error, 3 another daemon serves (--foreground), 4 --system without root.");
  *handler = [opt, &global]() { return RunDaemonCommand(global, *opt); };
}

}  // namespace gshare
