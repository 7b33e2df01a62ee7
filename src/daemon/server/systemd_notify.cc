#include "daemon/server/systemd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstddef>
#include <cstring>

namespace gshare {

SystemdNotify SystemdNotify::FromEnvironment() {
  SystemdNotify notify;
  const char* env = std::getenv("NOTIFY_SOCKET");
  if (env != nullptr && (env[0] == '/' || env[0] == '@')) notify.address_ = env;
  unsetenv("NOTIFY_SOCKET");
  return notify;
}

bool SystemdNotify::Send(const std::string& state) const {
  struct sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  if (address_.empty() || address_.size() >= sizeof addr.sun_path) return false;
  std::memcpy(addr.sun_path, address_.data(), address_.size());
  socklen_t len = sizeof addr;
  if (addr.sun_path[0] == '@') {
    // Abstract: a leading NUL, and the length says where the name ends (no NUL after it).
    addr.sun_path[0] = '\0';
    len = static_cast<socklen_t>(offsetof(struct sockaddr_un, sun_path) + address_.size());
  }
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const ssize_t sent = sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
                              reinterpret_cast<const struct sockaddr*>(&addr), len);
  close(fd);
  return sent == static_cast<ssize_t>(state.size());
}

}  // namespace gshare
