#include "base/process_identity.h"

#include <fstream>
#include <sstream>
#include <string>

namespace gshare {

namespace {

// /proc/PID/stat from field 3 on; empty when there is no such process. The command name
// (field 2) may hold spaces and parentheses: fields restart after the last ')'.
std::string StatFields(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return "";
  return stat.substr(paren + 2);
}

}  // namespace

std::optional<char> ProcessState(pid_t pid) {
  std::string fields = StatFields(pid);
  if (fields.empty()) return std::nullopt;
  return fields[0];
}

std::optional<int64_t> ProcessStartTime(pid_t pid) {
  std::string stat = StatFields(pid);
  if (stat.empty()) return std::nullopt;
  std::istringstream fields(stat);
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 3 && (field == "Z" || field == "X")) return std::nullopt;
    if (i == 22) return std::stoll(field);
  }
  return std::nullopt;
}

bool SameProcessAlive(pid_t pid, int64_t start_ticks) {
  std::optional<int64_t> start = ProcessStartTime(pid);
  return start && *start == start_ticks;
}

}  // namespace gshare
