// `gshare daemon [start|stop|install-service] [--foreground] [--system]`: the arbiter. `start`
// (the default) starts it detached unless one answers; `--foreground` serves in this process
// (systemd, debugging; exit 3 when another daemon serves its database or socket); `stop` asks
// a running daemon to exit; `install-service` writes a systemd unit. `--system`: the machine's
// daemon serving every user (root only, exit 4 otherwise), with its own config and paths.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "cli/cli.h"
#include "cli/daemon_glance.h"
#include "ipc/requests.h"
#include "cli/service_unit.h"
#include "daemon/server/daemon.h"
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
  StampLinesInFiles();
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

// `daemon status`: the daemon the commands would reach, as `systemctl status` shows a service:
// who serves where, since when, its jobs, scheduler and queue, its MPS servers. Exit 0 while
// it runs; 3 when none answers (LSB's "program is not running", as systemctl's).
int PrintDaemonStatus(const GlobalOptions& global, const ClientContext& ctx) {
  StatusRequest request;
  request.brief = true;
  Result<nlohmann::json> reply =
      RequestDaemon(global, proto::MsgType::kStatusRequest, request.ToJson(), /*start=*/false);
  if (!reply.ok()) {
    std::printf("no %s daemon answers at %s (%s)\n", DaemonScopeName(ctx.scope),
                ctx.socket_path.c_str(), reply.status().message().c_str());
    return kExitNotRunning;
  }
  try {
    const nlohmann::json& d = reply->at("daemon");
    const double up =
        std::max(0.0, static_cast<double>(std::time(nullptr)) - d.value("start_time", 0.0));
    std::printf(
        "%s daemon %lld (gshare %s) serving %s, up %s\n",
        d.value("mode", std::string("user")).c_str(), static_cast<long long>(d.value("pid", 0)),
        d.value("version", std::string("?")).c_str(), d.value("socket", std::string()).c_str(),
        FormatDuration(std::chrono::milliseconds(static_cast<int64_t>(up * 1000))).c_str());
    const nlohmann::json counts = d.value("job_counts", nlohmann::json::object());
    std::printf("jobs: %d running, %d pending, %d suspended; scheduler %s, queue %s\n",
                counts.value("RUNNING", 0), counts.value("PENDING", 0),
                counts.value("SUSPENDED", 0), d.value("scheduler", std::string("?")).c_str(),
                d.value("queue", std::string("?")).c_str());
    std::printf("database: %s\n", d.value("database", std::string()).c_str());
    const nlohmann::json mps = d.value("mps", nlohmann::json::object());
    for (const nlohmann::json& g : mps.value("gpus", nlohmann::json::array())) {
      const std::string state = g.value("up", false)
                                    ? "control daemon " + std::to_string(g.value("pid", 0))
                                    : "down (its jobs run outside MPS)";
      std::printf("MPS on %s: %s, %zu client job(s)\n", g.value("gpu", std::string()).c_str(),
                  state.c_str(), g.value("clients", nlohmann::json::array()).size());
    }
    for (const nlohmann::json& o : mps.value("arriving", nlohmann::json::array())) {
      std::printf("MPS: job %lld waits at its first CUDA call to join (%s)\n",
                  static_cast<long long>(o.value("job", int64_t{0})),
                  o.value("why", std::string()).c_str());
    }
    for (const nlohmann::json& o : mps.value("outside", nlohmann::json::array())) {
      std::printf("MPS: job %lld runs outside (%s)\n",
                  static_cast<long long>(o.value("job", int64_t{0})),
                  o.value("why", std::string()).c_str());
    }
  } catch (const std::exception&) {
    spdlog::error("daemon status: the daemon's reply is not a status document");
    return kExitError;
  }
  WarnIfConfigChanged(reply.value());
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
  if (opt.action == "status") return PrintDaemonStatus(global, *ctx);
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
  sub.add_option("action", opt->action, "start (default), stop, status or install-service")
      ->check(CLI::IsMember({"start", "stop", "status", "install-service"}));
  sub.add_flag("--foreground", opt->foreground, "Serve in this process (for systemd)");
  sub.add_flag("--system", opt->system,
               "The machine's daemon for every user (root; /etc/gshare/gshare.toml)");
  sub.add_option("--ready-fd", opt->ready_fd, "Write R (serving) or B (busy) to this fd")
      ->group("");  // internal: the launcher's readiness handshake
  sub.footer(
      "Examples:\n  gshare daemon            # start it (normally automatic)\n"
      "  gshare daemon --foreground\n  gshare daemon stop\n  gshare daemon status\n"
      "  gshare daemon install-service && systemctl --user enable --now gshare\n"
      "  sudo gshare daemon install-service --system && sudo systemctl enable --now gshare\n"
      "  sudo gshare daemon start --system    # without systemd\n"
      "Exit status: 0, 1 error, 3 another daemon serves (--foreground), 4 --system without root.");
  *handler = [opt, &global]() { return RunDaemonCommand(global, *opt); };
}

}  // namespace gshare
