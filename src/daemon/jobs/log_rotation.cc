// Rotation by rename, then dup2 of a new file onto the log descriptor: whoever writes through
// that descriptor (spdlog's stderr sink, a sanitizer report, abort messages) lands in the new
// file without reopening anything; processes that inherited the old descriptor keep writing
// to the rotated copy.
#include "daemon/jobs/log_rotation.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace gshare {

Result<bool> RotateLogIfLarger(int fd, const std::string& path, uint64_t max_bytes) {
  if (max_bytes == 0) return false;
  struct stat open_file {};
  struct stat named {};
  if (fstat(fd, &open_file) != 0 || !S_ISREG(open_file.st_mode)) return false;
  if (stat(path.c_str(), &named) != 0) return false;
  if (open_file.st_dev != named.st_dev || open_file.st_ino != named.st_ino) return false;
  if (static_cast<uint64_t>(open_file.st_size) <= max_bytes) return false;
  const std::string old = path + ".1";
  if (rename(path.c_str(), old.c_str()) != 0) {
    return Status::Error("cannot rotate " + path + ": " + std::strerror(errno));
  }
  int fresh = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fresh < 0) return Status::Error("cannot open " + path + ": " + std::strerror(errno));
  const bool moved = dup2(fresh, fd) >= 0;
  const int saved = errno;
  close(fresh);
  if (!moved) return Status::Error("cannot rotate " + path + ": " + std::strerror(saved));
  return true;
}

}  // namespace gshare
