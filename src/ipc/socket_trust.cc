#include "ipc/socket_trust.h"

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

namespace gshare {
namespace {

std::string Octal(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

std::string Owners(uid_t me) {
  return me == 0 ? "root" : "you (uid " + std::to_string(me) + ") or root";
}

bool TrustedOwner(uid_t owner, uid_t me) { return owner == me || owner == 0; }

}  // namespace

std::string UntrustedDirReason(const struct stat& st, uid_t me) {
  if (S_ISLNK(st.st_mode)) return "its directory is a symbolic link";
  if (!S_ISDIR(st.st_mode)) return "its directory is not a directory";
  if (!TrustedOwner(st.st_uid, me)) {
    return "its directory belongs to uid " + std::to_string(st.st_uid) + ", not to " + Owners(me);
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return "its directory is writable by others (mode " + Octal(st.st_mode) + ")";
  }
  return "";
}

std::string UntrustedSocketReason(const struct stat& st, uid_t me) {
  if (!S_ISSOCK(st.st_mode)) return "it is not a socket";
  if (!TrustedOwner(st.st_uid, me)) {
    return "the socket belongs to uid " + std::to_string(st.st_uid) + ", not to " + Owners(me);
  }
  return "";
}

std::string UntrustedPeerReason(uid_t peer, uid_t me) {
  if (TrustedOwner(peer, me)) return "";
  return "the process listening there runs as uid " + std::to_string(peer) + ", not as " +
         Owners(me);
}

Status CheckSocketPath(const std::string& socket_path) {
  const std::string dir = std::filesystem::path(socket_path).parent_path().string();
  struct stat st;
  if (lstat(dir.empty() ? "." : dir.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return Status::Error("refusing to use " + socket_path + ": cannot inspect " + dir + ": " +
                         std::strerror(errno));
  }
  std::string why = UntrustedDirReason(st, getuid());
  if (!why.empty())
    return Status::Error("refusing to use " + socket_path + ": " + why + " (" + dir + ")");
  if (lstat(socket_path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return Status::Error("refusing to use " + socket_path + ": " + std::strerror(errno));
  }
  why = UntrustedSocketReason(st, getuid());
  if (!why.empty()) return Status::Error("refusing to use " + socket_path + ": " + why);
  return Status::Ok();
}

Status CheckPeer(int fd, const std::string& socket_path) {
  struct ucred cred = {};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return Status::Error("refusing to use " + socket_path + ": cannot identify the process " +
                         "listening there: " + std::strerror(errno));
  }
  std::string why = UntrustedPeerReason(cred.uid, getuid());
  if (!why.empty()) return Status::Error("refusing to use " + socket_path + ": " + why);
  return Status::Ok();
}

}  // namespace gshare
