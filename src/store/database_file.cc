#include "store/database_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace gshare {
namespace {

// The first 16 bytes of every SQLite 3 database (sqlite.org/fileformat.html, 1.3).
constexpr char kSqliteHeader[16] = "SQLite format 3";  // with its terminating NUL

// Creates each missing directory of `dir` with mode 0700 (existing ones are left as they are).
Status MakeDirs(const std::string& dir) {
  for (size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
    std::string prefix = dir.substr(0, slash);
    if (!prefix.empty() && mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return Status::Error("cannot create directory " + prefix + ": " + std::strerror(errno));
    }
    if (slash == std::string::npos) return Status::Ok();
  }
}

Status NotADatabase(const std::string& path, const std::string& why) {
  return Status::Error("job store " + path + ": not a database: " + why +
                       "; refusing to use it (move it away to start a new queue)");
}

}  // namespace

Result<DatabaseFile> InspectDatabaseFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT) return DatabaseFile::kMissing;
    return Status::Error("job store " + path + ": open: " + std::strerror(errno));
  }
  struct stat st;
  char head[sizeof kSqliteHeader] = {};
  const bool stated = fstat(fd, &st) == 0;
  const ssize_t n = stated && S_ISREG(st.st_mode) ? pread(fd, head, sizeof head, 0) : 0;
  const int err = errno;
  close(fd);
  if (!stated) return Status::Error("job store " + path + ": stat: " + std::strerror(err));
  if (!S_ISREG(st.st_mode)) return NotADatabase(path, "it is not a regular file");
  if (st.st_size == 0) return NotADatabase(path, "the file is empty (0 bytes)");
  if (n < 0) return Status::Error("job store " + path + ": read: " + std::strerror(err));
  if (static_cast<size_t>(n) < sizeof head || std::memcmp(head, kSqliteHeader, sizeof head) != 0) {
    return NotADatabase(path, "the file does not begin with SQLite's header");
  }
  return DatabaseFile::kSqlite;
}

Status PrepareDatabaseFile(const std::string& path,
                           const std::function<Status(const std::string& fresh)>& create) {
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    Status st = MakeDirs(path.substr(0, slash));
    if (!st.ok()) return Status::Error("job store " + path + ": " + st.message());
  }
  Result<DatabaseFile> found = InspectDatabaseFile(path);
  if (!found.ok()) return found.status();
  if (found.value() == DatabaseFile::kSqlite) return Status::Ok();
  const std::string fresh = path + ".new";
  for (const char* suffix : {"", "-wal", "-shm"}) unlink((fresh + suffix).c_str());
  if (Status made = create(fresh); !made.ok()) return made;
  if (rename(fresh.c_str(), path.c_str()) != 0) {
    return Status::Error("job store " + path + ": rename: " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace gshare
