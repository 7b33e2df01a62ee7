#include "base/process_identity.h"

#include <fstream>
#include <sstream>
#include <string>

namespace gshare {

std::optional<int64_t> ProcessStartTime(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The command name (field 2) may hold spaces and parentheses: fields restart after the last ')'.
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(paren + 2));
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
