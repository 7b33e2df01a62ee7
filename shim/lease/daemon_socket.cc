// DaemonSocket (daemon_socket.h): the connection to the daemon, its frames, and the
// connection to a daemon found trustworthy (ConnectTo, ConnectChosen).
#include "lease/daemon_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gshare/paths.h"
#include "gshare/protocol.h"
#include "memory/mono_clock.h"
#include "shim_log.h"

namespace gshare::shim::lease {

namespace {

bool WriteAll(int fd, const void* data, size_t len) {
  const char* p = static_cast<const char*>(data);
  while (len > 0) {
    ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

bool ReadAll(int fd, void* data, size_t len) {
  char* p = static_cast<char*>(data);
  while (len > 0) {
    ssize_t n = recv(fd, p, len, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

bool DaemonSocket::SendFrame(int fd, proto::MsgType type, const void* payload, uint32_t len) {
  if (fd < 0) return false;
  char buf[sizeof(proto::FrameHeader) + sizeof(proto::MemReportMsg)];
  if (len > sizeof(proto::MemReportMsg)) return false;
  proto::FrameHeader h = proto::MakeHeader(type, len);
  std::memcpy(buf, &h, sizeof h);
  std::memcpy(buf + sizeof h, payload, len);
  MutexLock lock(send_mu_);
  return WriteAll(fd, buf, sizeof h + len);
}

int DaemonSocket::Hello(int fd) {
  if (fd < 0) return -1;
  proto::HelloMsg hello{job_id_, static_cast<int32_t>(getpid()), 0, {}};
  std::memcpy(hello.token, job_token_, sizeof hello.token);
  if (!SendFrame(fd, proto::MsgType::kHello, &hello, sizeof hello)) {
    close(fd);
    return -1;
  }
  return fd;
}

bool DaemonSocket::Open(uint64_t job_id, const uint8_t token[16]) {
  if (opened_) return false;
  opened_ = true;
  job_id_ = job_id;
  std::memcpy(job_token_, token, sizeof job_token_);
  fd_ = Hello(choose_(path_, sizeof path_));
  return fd_ >= 0;
}

int DaemonSocket::Dial() { return Hello(dial_(path_)); }

void DaemonSocket::Disconnect() {
  if (fd_ >= 0) {
    shutdown(fd_, SHUT_RDWR);
    if (dead_fd_ >= 0) close(dead_fd_);
    dead_fd_ = fd_;
  }
  fd_ = -1;
}

void DaemonSocket::CloseDead() {
  if (dead_fd_ >= 0) {
    close(dead_fd_);
    dead_fd_ = -1;
  }
}

bool DaemonSocket::Ping(int fd, uint64_t seq) {
  proto::PingMsg m{seq};
  return SendFrame(fd, proto::MsgType::kPing, &m, sizeof m);
}

bool DaemonSocket::AwaitPong(int fd, uint64_t seq, int ms) {
  if (!Ping(fd, seq)) return false;
  const int64_t deadline = MonoNowNs() / 1000000 + ms;
  for (;;) {
    const int64_t left = deadline - MonoNowNs() / 1000000;
    if (left <= 0) return false;
    struct pollfd p = {fd, POLLIN, 0};
    int n = poll(&p, 1, static_cast<int>(left));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    proto::FrameHeader h;
    proto::PingMsg m;
    if (!ReadAll(fd, &h, sizeof h)) return false;
    if (proto::CheckHeader(h, sizeof(proto::LeaseMsg)) != proto::HeaderCheck::kOk ||
        static_cast<proto::MsgType>(h.type) != proto::MsgType::kPong) {
      return false;  // nothing else is due before the first lease request
    }
    return ReadAll(fd, &m, sizeof m) && m.seq == seq;
  }
}

void DaemonSocket::ResetAfterFork() {
  // Only async-signal-safe work: the child has one thread and no connection of its own.
  if (fd_ >= 0) close(fd_);
  if (dead_fd_ >= 0) close(dead_fd_);
  fd_ = dead_fd_ = -1;
  send_mu_.ReinitAfterFork();
  opened_ = false;
}

namespace {

// Whether the daemon behind `path` may be trusted, checked before anything is sent
// (issue 27: /tmp/gshare-UID is a name any user can take first): the socket's directory is
// a real directory of this user or root that nobody else can write, the socket is theirs too
// (both by lstat, links not followed). No heap: called from the lease thread and from
// EnsureStartedLocked. The listener itself is checked after connect (PeerTrusted).
bool PathTrusted(const char* path) {
  const uid_t me = getuid();
  char dir[sizeof(sockaddr_un::sun_path)];
  std::strncpy(dir, path, sizeof dir - 1);
  dir[sizeof dir - 1] = '\0';
  char* slash = std::strrchr(dir, '/');
  if (slash == nullptr) return false;
  if (slash == dir) {
    slash[1] = '\0';  // "/gshare.sock": the root directory
  } else {
    *slash = '\0';
  }
  struct stat st {};
  if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || (st.st_uid != me && st.st_uid != 0) ||
      (st.st_mode & 022) != 0) {
    return false;
  }
  return lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) && (st.st_uid == me || st.st_uid == 0);
}

bool PeerTrusted(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
         (cred.uid == getuid() || cred.uid == 0);
}

bool g_refused_warned = false;  // one warning per process for an untrusted socket

}  // namespace

int ConnectTo(const char* path) {
  if (!PathTrusted(path)) {
    if (!g_refused_warned && access(path, F_OK) == 0) {
      g_refused_warned = true;
      Warn(
          "gshare: refusing the daemon socket %s: it or its directory is not yours (or "
          "root's) or others may write there; running unshared",
          path);
    }
    return -1;
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path, sizeof addr.sun_path - 1);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || !PeerTrusted(fd)) {
    close(fd);
    return -1;
  }
  return fd;
}

int ConnectChosen(char* path, size_t cap) {
  if (!gshare::paths::SocketExplicit() && gshare::paths::SystemSocketPath(path, cap)) {
    int fd = ConnectTo(path);
    if (fd >= 0) return fd;
  }
  return gshare::paths::SocketPath(path, cap) ? ConnectTo(path) : -1;
}

}  // namespace gshare::shim::lease
