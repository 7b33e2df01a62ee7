#include "ipc/daemon_choice.h"

namespace gshare {

const char* DaemonScopeName(DaemonScope scope) {
  return scope == DaemonScope::kSystem ? "system" : "user";
}

DaemonChoice ChooseDaemon(const std::string& explicit_socket, const std::string& system_socket,
                          const std::string& user_socket,
                          const std::function<bool(const std::string&)>& answers) {
  if (!explicit_socket.empty()) {
    // A job of the system daemon gets its socket as GSHARE_SOCKET; a nested `gshare` there must
    // still know it talks to the system daemon (whose database it cannot read).
    return {explicit_socket == system_socket ? DaemonScope::kSystem : DaemonScope::kUser,
            explicit_socket};
  }
  // Never a per-user daemon while the system one answers: its jobs would not be arbitrated
  // against anyone else's.
  if (!system_socket.empty() && answers(system_socket)) {
    return {DaemonScope::kSystem, system_socket};
  }
  return {DaemonScope::kUser, user_socket};
}

}  // namespace gshare
