#include "base/process_identity.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <filesystem>
#include <sstream>
#include <string>

namespace gshare {

std::string ReadProcFile(const std::string& path) {
  constexpr size_t kMax = 1 << 20;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string text;
  char buf[4096];
  while (text.size() < kMax) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      text.clear();
      break;
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return text;
}

ProcessCommand ReadProcessCommand(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid);
  ProcessCommand command;
  const std::string all = ReadProcFile(dir + "/cmdline");
  size_t begin = 0;
  while (begin < all.size()) {
    size_t end = all.find('\0', begin);
    if (end == std::string::npos) end = all.size();
    command.argv.push_back(all.substr(begin, end - begin));
    begin = end + 1;
  }
  std::error_code ec;
  command.cwd = std::filesystem::read_symlink(dir + "/cwd", ec).string();
  return command;
}

std::optional<ProcessStat> ReadProcessStat(pid_t pid, const std::string& proc_root) {
  const std::string stat = ReadProcFile(proc_root + "/" + std::to_string(pid) + "/stat");
  // The command name (field 2) may hold spaces and parentheses: fields restart after the last
  // ')'.
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return std::nullopt;
  std::istringstream fields(stat.substr(paren + 2));
  auto number = [](const std::string& field, auto* out) {
    return std::from_chars(field.data(), field.data() + field.size(), *out).ec == std::errc{};
  };
  ProcessStat s;
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 3) s.state = field[0];
    if (i == 4 && !number(field, &s.ppid)) return std::nullopt;
    if (i == 5 && !number(field, &s.pgrp)) return std::nullopt;
    if (i == 22) return number(field, &s.start_ticks) ? std::optional(s) : std::nullopt;
  }
  return std::nullopt;
}

std::optional<char> ProcessState(pid_t pid) {
  std::optional<ProcessStat> s = ReadProcessStat(pid);
  if (!s) return std::nullopt;
  return s->state;
}

std::optional<int64_t> ProcessStartTime(pid_t pid) {
  std::optional<ProcessStat> s = ReadProcessStat(pid);
  if (!s || s->state == 'Z' || s->state == 'X') return std::nullopt;
  return s->start_ticks;
}

bool SameProcessAlive(pid_t pid, int64_t start_ticks) {
  std::optional<int64_t> start = ProcessStartTime(pid);
  return start && *start == start_ticks;
}

std::optional<pid_t> GroupLeaderChild(pid_t parent, const std::string& proc_root) {
  std::optional<pid_t> found;
  std::error_code ec;  // increment(ec), not ++: nothing here throws
  for (std::filesystem::directory_iterator it(proc_root, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    pid_t pid = 0;
    const auto [last, err] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (err != std::errc{} || last != name.data() + name.size()) continue;
    std::optional<ProcessStat> s = ReadProcessStat(pid, proc_root);
    if (s && s->ppid == parent && s->pgrp == pid && s->state != 'Z' && (!found || pid < *found)) {
      found = pid;
    }
  }
  return found;
}

}  // namespace gshare
