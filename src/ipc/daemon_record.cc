#include "ipc/daemon_record.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "base/replace_file.h"

namespace gshare {
namespace {

constexpr size_t kMaxRecordBytes = 8192;

}  // namespace

std::string DaemonRecordPath(const std::string& state_dir) { return state_dir + "/daemon.json"; }

Status WriteDaemonRecord(const std::string& path, const DaemonRecord& record) {
  return ReplaceFile(path,
                     nlohmann::json{{"pid", record.pid}, {"socket", record.socket}}.dump() + "\n");
}

std::optional<DaemonRecord> ReadDaemonRecord(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st;
  std::string text(kMaxRecordBytes, '\0');
  ssize_t n = -1;
  // Someone else's record could send us to their socket; CheckSocketPath would stop that
  // too, but there is no reason to read it at all.
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_uid == getuid() || st.st_uid == 0) &&
      (st.st_mode & (S_IWGRP | S_IWOTH)) == 0) {
    n = read(fd, text.data(), text.size());
  }
  close(fd);
  if (n <= 0) return std::nullopt;
  text.resize(static_cast<size_t>(n));
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (!doc.is_object() || !doc.contains("pid") || !doc["pid"].is_number_integer() ||
      !doc.contains("socket") || !doc["socket"].is_string()) {
    return std::nullopt;
  }
  DaemonRecord record;
  record.pid = doc["pid"].get<pid_t>();
  record.socket = doc["socket"].get<std::string>();
  if (record.pid <= 0 || record.socket.empty() || record.socket[0] != '/') return std::nullopt;
  // A daemon killed with SIGKILL leaves its record behind.
  if (kill(record.pid, 0) != 0 && errno != EPERM) return std::nullopt;
  return record;
}

void RemoveDaemonRecord(const std::string& path, pid_t pid) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  char buf[kMaxRecordBytes];
  const ssize_t n = read(fd, buf, sizeof buf);
  close(fd);
  if (n <= 0) return;
  nlohmann::json doc =
      nlohmann::json::parse(std::string(buf, static_cast<size_t>(n)), nullptr, false);
  if (doc.is_object() && doc.contains("pid") && doc["pid"].is_number_integer() &&
      doc["pid"].get<int64_t>() == pid) {
    unlink(path.c_str());
  }
}

}  // namespace gshare
