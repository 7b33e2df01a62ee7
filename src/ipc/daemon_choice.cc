#include "ipc/daemon_choice.h"

namespace gshare {

const char* DaemonScopeName(DaemonScope scope) {
  return scope == DaemonScope::kSystem ? "system" : "user";
}

DaemonChoice ChooseDaemon(const std::string& explicit_socket, const std::string& system_socket,
                          const std::string& user_socket, const DaemonProbe& probe) {
  if (!explicit_socket.empty()) {
    // A job of the system daemon gets its socket as GSHARE_SOCKET: a nested `gshare` there
    // must still know it talks to the system daemon, whose database it cannot read.
    if (explicit_socket == system_socket) return {DaemonScope::kSystem, explicit_socket, false};
    if (explicit_socket == probe.own_socket) return {DaemonScope::kUser, explicit_socket, true};
    std::optional<uid_t> listener = probe.listener(explicit_socket);
    if (!listener) return {DaemonScope::kUser, explicit_socket, true};  // ours, once started
    // Root's daemon serving a user is the machine's, wherever its socket is.
    if (*listener == 0 && probe.me != 0) return {DaemonScope::kSystem, explicit_socket, false};
    return {DaemonScope::kUser, explicit_socket, false};
  }
  // Never a per-user daemon while the system one answers: its jobs would not be arbitrated
  // against anyone else's.
  if (!system_socket.empty() && probe.listener(system_socket)) {
    return {DaemonScope::kSystem, system_socket, false};
  }
  return {DaemonScope::kUser, user_socket, true};
}

}  // namespace gshare
