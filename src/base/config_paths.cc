// Where gshare's config files are and the paths a config resolves to: the files read in order
// (/etc/gshare/gshare.toml, then $XDG_CONFIG_HOME/gshare/gshare.toml or
// ~/.config/gshare/gshare.toml, then --config), the system daemon's socket and state directory,
// and the user's state directory (XDG Base Directory Specification 0.8: a relative
// XDG_CONFIG_HOME or XDG_STATE_HOME is ignored). Declared in config.h. Any thread; reads the
// environment and, without $HOME, the password database.
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "base/config.h"
#include "gshare/paths.h"

namespace gshare {
namespace {

constexpr const char* kSystemConfig = "/etc/gshare/gshare.toml";

// The value of an environment variable, or "" when unset.
std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

// $HOME, else the password database's entry (cron and systemd may leave HOME unset); "" if none.
std::string HomeDir() {
  std::string home = Env("HOME");
  if (!home.empty()) return home;
  struct passwd pw;
  struct passwd* found = nullptr;
  char buf[4096];
  if (getpwuid_r(getuid(), &pw, buf, sizeof buf, &found) == 0 && found != nullptr &&
      found->pw_dir != nullptr) {
    return found->pw_dir;
  }
  return "";
}

}  // namespace

ConfigSources DefaultConfigSources(std::optional<std::string> explicit_path) {
  ConfigSources sources;
  sources.files.push_back({kSystemConfig, false});
  // XDG basedir spec: a relative XDG_CONFIG_HOME is invalid and ignored.
  std::string xdg = Env("XDG_CONFIG_HOME");
  std::string home = HomeDir();
  if (!xdg.empty() && xdg[0] == '/') {
    sources.files.push_back({xdg + "/gshare/gshare.toml", false});
  } else if (!home.empty()) {
    sources.files.push_back({home + "/.config/gshare/gshare.toml", false});
  }
  if (explicit_path) sources.files.push_back({std::move(*explicit_path), true});
  return sources;
}

ConfigSources SystemConfigSources(std::optional<std::string> explicit_path) {
  ConfigSources sources;
  if (explicit_path) {
    sources.files.push_back({std::move(*explicit_path), true});
  } else {
    sources.files.push_back({kSystemConfig, false});
  }
  return sources;
}

std::string SystemSocket(const Config& config) {
  return config.system.socket.empty() ? paths::kSystemSocket : config.system.socket;
}

std::string ClientSystemSocket(const Config& config) {
  std::string env = Env(paths::kSystemSocketEnv);
  return env.empty() ? SystemSocket(config) : env;
}

std::string SystemStateDir(const Config& config) {
  return config.system.state_dir.empty() ? kSystemStateDir : config.system.state_dir;
}

std::string StateDir(const Config& config) {
  const std::string& dir = config.daemon.state_dir;
  if (!dir.empty()) {
    if (dir == "~" || dir.rfind("~/", 0) == 0) return HomeDir() + dir.substr(1);
    return dir;
  }
  std::string env = Env("GSHARE_STATE_DIR");
  if (!env.empty()) return env;
  std::string xdg = Env("XDG_STATE_HOME");
  if (!xdg.empty() && xdg[0] == '/') return xdg + "/gshare";
  return HomeDir() + "/.local/state/gshare";
}

}  // namespace gshare
