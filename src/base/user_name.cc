#include "base/user_name.h"

#include <grp.h>
#include <pwd.h>

#include <cstdlib>
#include <vector>

namespace gshare {

std::string UserName(uint32_t uid) {
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
    return found->pw_name;
  }
  return std::to_string(uid);
}

std::optional<uint32_t> UserIdOfName(const std::string& name) {
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  if (getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
    return found->pw_uid;
  }
  return std::nullopt;
}

std::optional<uint32_t> GroupIdOfName(const std::string& name) {
  std::vector<char> buf(16384);
  group gr{};
  group* found = nullptr;
  if (getgrnam_r(name.c_str(), &gr, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
    return found->gr_gid;
  }
  return std::nullopt;
}

std::optional<uint32_t> UserId(const std::string& user) {
  if (std::optional<uint32_t> uid = UserIdOfName(user)) return uid;
  char* end = nullptr;
  unsigned long n = std::strtoul(user.c_str(), &end, 10);
  if (!user.empty() && *end == '\0' && n <= 0xffffffffUL) return static_cast<uint32_t>(n);
  return std::nullopt;
}

}  // namespace gshare
