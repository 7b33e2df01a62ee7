// Where the daemon's socket lives: one rule shared by the CLI and the shim, so that
// `gshare run`, a cron `gshare submit` and a preloaded job all reach the same daemon.
// No heap and no exceptions (the shim calls it); any thread; reads the environment.
#pragma once

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "gshare/job_env.h"

namespace gshare::paths {

// Where the system daemon (`gshare daemon --system`) listens by default, and the variable that
// names another place for clients (tests; sites whose [system] socket is elsewhere, for jobs
// started outside gshare: `gshare run` and submitted jobs get GSHARE_SOCKET anyway).
inline constexpr const char* kSystemSocket = "/run/gshare/gshare.sock";
inline constexpr const char* kSystemSocketEnv = "GSHARE_SYSTEM_SOCKET";

// The system daemon's socket as a client looks for it: $GSHARE_SYSTEM_SOCKET if set, else
// kSystemSocket. Returns false when `out` (of `cap` bytes) is too small.
inline bool SystemSocketPath(char* out, size_t cap) {
  const char* env = std::getenv(kSystemSocketEnv);
  int n = std::snprintf(out, cap, "%s", env != nullptr && env[0] != '\0' ? env : kSystemSocket);
  return n > 0 && static_cast<size_t>(n) < cap;
}

// Whether $GSHARE_SOCKET names the socket (then neither the system nor the per-user rule
// applies).
inline bool SocketExplicit() {
  const char* env = std::getenv(job_env::kSocket);
  return env != nullptr && env[0] != '\0';
}

// The per-user runtime directory of gshare, without trailing slash:
//   $XDG_RUNTIME_DIR/gshare when XDG_RUNTIME_DIR is set (XDG basedir spec 0.8),
//   else /run/user/<uid>/gshare when /run/user/<uid> exists and belongs to the user
//   (what logind gives an interactive shell, so cron resolves the same place),
//   else /tmp/gshare-<uid>.
// Returns false when `out` (of `cap` bytes) is too small.
inline bool RuntimeDir(char* out, size_t cap) {
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  int n;
  if (xdg != nullptr && xdg[0] == '/') {
    n = std::snprintf(out, cap, "%s/gshare", xdg);
  } else {
    char run_user[64];
    std::snprintf(run_user, sizeof run_user, "/run/user/%u", static_cast<unsigned>(getuid()));
    struct stat st;
    if (stat(run_user, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid()) {
      n = std::snprintf(out, cap, "%s/gshare", run_user);
    } else {
      n = std::snprintf(out, cap, "/tmp/gshare-%u", static_cast<unsigned>(getuid()));
    }
  }
  return n > 0 && static_cast<size_t>(n) < cap;
}

// The per-user daemon's socket: $GSHARE_SOCKET if set, else RuntimeDir()/gshare.sock. Clients
// try SystemSocketPath() first when $GSHARE_SOCKET is unset (docs/design.md "Which daemon").
inline bool SocketPath(char* out, size_t cap) {
  const char* env = std::getenv(job_env::kSocket);
  if (env != nullptr && env[0] != '\0') {
    int n = std::snprintf(out, cap, "%s", env);
    return n > 0 && static_cast<size_t>(n) < cap;
  }
  char dir[400];
  if (!RuntimeDir(dir, sizeof dir)) return false;
  int n = std::snprintf(out, cap, "%s/gshare.sock", dir);
  return n > 0 && static_cast<size_t>(n) < cap;
}

}  // namespace gshare::paths
