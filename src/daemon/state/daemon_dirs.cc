#include "daemon/state/daemon_dirs.h"

#include <errno.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "gshare/paths.h"
#include "ipc/socket_trust.h"

namespace gshare {
namespace {

std::string Octal(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

std::string StandardRuntimeDir() {
  char dir[512];
  return paths::RuntimeDir(dir, sizeof dir) ? dir : "";
}

// Group and other bits off (others' access to what the daemon keeps there).
Status MakePrivate(const std::string& path, const struct stat& st, const char* what) {
  if ((st.st_mode & 077) == 0) return Status::Ok();
  if (chmod(path.c_str(), st.st_mode & 0700) != 0) {
    return Status::Error("cannot make " + std::string(what) + " " + path + " private (mode " +
                         Octal(st.st_mode) + "): " + std::strerror(errno));
  }
  spdlog::warn("{} {} was mode {}; now {}", what, path, Octal(st.st_mode),
               Octal(st.st_mode & 0700));
  return Status::Ok();
}

std::string NotYours(const std::string& what, const std::string& path, uid_t owner) {
  return what + " " + path + " belongs to uid " + std::to_string(owner) + ", not to uid " +
         std::to_string(getuid()) + ": remove it or choose another";
}

}  // namespace

Status PrepareSocketDir(const std::string& socket_path) {
  const std::string dir = std::filesystem::path(socket_path).parent_path().string();
  if (dir.empty()) return Status::Error("the socket path " + socket_path + " is not absolute");
  const bool standard = dir == StandardRuntimeDir();
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT)
      return Status::Error("cannot inspect " + dir + ": " + std::strerror(errno));
    if (!standard) {
      return Status::Error("cannot serve " + socket_path + ": its directory " + dir +
                           " does not exist (create it, mode 0700, or choose another socket)");
    }
    // Only the last component: /run/user/UID and /tmp are the system's to make.
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      return Status::Error("cannot create " + dir + ": " + std::strerror(errno));
    }
    if (lstat(dir.c_str(), &st) != 0) {
      return Status::Error("cannot inspect " + dir + ": " + std::strerror(errno));
    }
  }
  if (!standard) {
    const std::string why = UntrustedDirReason(st, getuid());
    if (!why.empty())
      return Status::Error("cannot serve " + socket_path + ": " + why + " (" + dir + ")");
    return Status::Ok();
  }
  // Someone else may have made /tmp/gshare-UID first, for us to serve in and their
  // own socket to wait there: never use it.
  if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) {
    return Status::Error("runtime directory " + dir +
                         " is not a directory (a symbolic link?): remove it");
  }
  if (st.st_uid != getuid()) return Status::Error(NotYours("runtime directory", dir, st.st_uid));
  return MakePrivate(dir, st, "runtime directory");
}

Status PrepareStateDir(const std::string& state_dir) {
  if (state_dir.empty() || state_dir[0] != '/') {
    return Status::Error("the state directory \"" + state_dir + "\" is not an absolute path");
  }
  struct stat st;
  if (stat(state_dir.c_str(), &st) != 0) {
    if (errno != ENOENT) {
      return Status::Error("cannot inspect " + state_dir + ": " + std::strerror(errno));
    }
    std::error_code ec;
    std::filesystem::create_directories(state_dir, ec);  // 0700 under the daemon's umask
    if (ec) return Status::Error("cannot create " + state_dir + ": " + ec.message());
    if (stat(state_dir.c_str(), &st) != 0) {
      return Status::Error("cannot inspect " + state_dir + ": " + std::strerror(errno));
    }
  }
  if (!S_ISDIR(st.st_mode))
    return Status::Error("state directory " + state_dir + " is not a directory");
  if (st.st_uid != getuid())
    return Status::Error(NotYours("state directory", state_dir, st.st_uid));
  return MakePrivate(state_dir, st, "state directory");
}

Status PrivateDatabaseFiles(const std::string& database_path) {
  for (const char* suffix : {"", "-wal", "-shm"}) {
    const std::string path = database_path + suffix;
    struct stat st;
    if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid()) continue;
    if (Status s = MakePrivate(path, st, "database file"); !s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace gshare
