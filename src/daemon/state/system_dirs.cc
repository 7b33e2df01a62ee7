#include "daemon/state/system_dirs.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "base/user_name.h"
#include "daemon/state/daemon_dirs.h"
#include "ipc/socket_trust.h"

namespace gshare {
namespace {

Status Errno(const std::string& what, const std::string& path) {
  return Status::Error("cannot " + what + " " + path + ": " + std::strerror(errno));
}

// A real directory at `path` (made with `mode` when missing), owned uid:gid, with `mode`.
// lstat, lchown: a symbolic link put there is refused, never followed.
Status EnsureDir(const std::string& path, uid_t uid, gid_t gid, mode_t mode) {
  if (mkdir(path.c_str(), mode) != 0 && errno != EEXIST) return Errno("create", path);
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return Errno("inspect", path);
  if (!S_ISDIR(st.st_mode)) {
    return Status::Error(path + " is not a directory (a symbolic link?): remove it");
  }
  if ((st.st_uid != uid || st.st_gid != gid) && lchown(path.c_str(), uid, gid) != 0) {
    return Errno("change the owner of", path);
  }
  if ((st.st_mode & 07777) != mode && chmod(path.c_str(), mode) != 0) {
    return Errno("change the mode of", path);
  }
  return Status::Ok();
}

}  // namespace

Status PrepareSystemSocketDir(const std::string& socket_path) {
  const std::string dir = std::filesystem::path(socket_path).parent_path().string();
  if (dir.empty() || socket_path[0] != '/') {
    return Status::Error("the socket path " + socket_path + " is not absolute");
  }
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return Errno("create", dir);
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) return Errno("inspect", dir);
  if (std::string why = UntrustedDirReason(st, getuid()); !why.empty()) {
    return Status::Error("cannot serve " + socket_path + ": " + why + " (" + dir + ")");
  }
  // Users must reach the socket; nobody but its owner may change what is in the directory.
  if ((st.st_mode & 0755) != 0755 && chmod(dir.c_str(), (st.st_mode & 07777) | 0755) != 0) {
    return Errno("change the mode of", dir);
  }
  return Status::Ok();
}

Status ShareSocket(const std::string& socket_path, const std::string& group) {
  if (group.empty()) {
    if (chmod(socket_path.c_str(), 0666) != 0) return Errno("change the mode of", socket_path);
    return Status::Ok();
  }
  std::optional<uint32_t> gid = GroupIdOfName(group);
  if (!gid) return Status::Error("[system] socket_group: no group \"" + group + "\"");
  if (chown(socket_path.c_str(), getuid(), *gid) != 0) {
    return Errno("change the group of", socket_path);
  }
  if (chmod(socket_path.c_str(), 0660) != 0) return Errno("change the mode of", socket_path);
  return Status::Ok();
}

Status PrepareSystemStateDir(const std::string& state_dir) {
  if (Status s = PrepareStateDir(state_dir); !s.ok()) return s;
  if (chmod(state_dir.c_str(), 0711) != 0) return Errno("change the mode of", state_dir);
  return Status::Ok();
}

std::string UserJobDir(const std::string& state_dir, uid_t uid) {
  return state_dir + "/users/" + std::to_string(uid);
}

Status PrepareUserJobDir(const std::string& state_dir, uid_t uid, gid_t gid) {
  const uid_t root = getuid();
  const gid_t root_group = getgid();
  if (Status s = EnsureDir(state_dir + "/users", root, root_group, 0711); !s.ok()) return s;
  const std::string dir = UserJobDir(state_dir, uid);
  if (Status s = EnsureDir(dir, root, root_group, 0711); !s.ok()) return s;
  for (const char* sub : {"/jobs", "/logs", "/scripts"}) {
    if (Status s = EnsureDir(dir + sub, uid, gid, 0700); !s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace gshare
