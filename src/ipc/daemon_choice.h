// Which daemon a client talks to (docs/design.md "Which daemon"): an explicit socket, else the
// system daemon when it answers, else the user's own (started on demand). The rule is pure;
// whether a socket answers is asked through a callback. Any thread.
#pragma once

#include <functional>
#include <string>

namespace gshare {

enum class DaemonScope {
  kSystem,  // the machine's daemon (`gshare daemon --system`), serving every user
  kUser,    // this user's own daemon, started by the first client that finds none
};

struct DaemonChoice {
  DaemonScope scope = DaemonScope::kUser;
  std::string socket;
};

// "system" or "user", as `gshare status` prints it.
const char* DaemonScopeName(DaemonScope scope);

// The daemon to use. `explicit_socket` ($GSHARE_SOCKET or [daemon] socket; empty when unset)
// wins: it is the system daemon when it names `system_socket`, else a user's daemon. Without
// it, `system_socket` when `answers(system_socket)` is true (a trusted daemon accepted a
// connection), else `user_socket`. `answers` is called at most once, and only without an
// explicit socket.
DaemonChoice ChooseDaemon(const std::string& explicit_socket, const std::string& system_socket,
                          const std::string& user_socket,
                          const std::function<bool(const std::string&)>& answers);

}  // namespace gshare
