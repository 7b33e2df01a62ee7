#include "base/mail_type.h"

#include <array>
#include <cctype>
#include <set>
#include <sstream>

namespace gshare {
namespace {

constexpr std::array<const char*, 7> kTypes = {
    "BEGIN", "END", "FAIL", "REQUEUE", "TIME_LIMIT", "INVALID_DEPEND", "ALL"};

}  // namespace

Result<std::string> ParseMailTypes(const std::string& text) {
  std::set<std::string> given;
  std::stringstream in(text);
  std::string item;
  bool none = false;
  while (std::getline(in, item, ',')) {
    for (char& c : item) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    bool known = item == "NONE";
    for (const char* t : kTypes) known = known || item == t;
    if (!known) {
      return Status::Error("--mail-type: unknown type \"" + item +
                           "\" (use NONE, BEGIN, END, FAIL, REQUEUE, TIME_LIMIT, "
                           "INVALID_DEPEND or ALL, comma-separated)");
    }
    if (item == "NONE") {
      none = true;
    } else {
      given.insert(item);
    }
  }
  if (none && !given.empty()) return Status::Error("--mail-type: NONE with other types");
  std::string out;
  for (const char* t : kTypes) {
    if (given.count(t) != 0) out += (out.empty() ? "" : ",") + std::string(t);
  }
  return out;
}

Status CheckMailUser(const std::string& user) {
  if (user.size() > kMaxMailUser ||
      user.find_first_of(std::string("\n\r\t\0", 4)) != std::string::npos) {
    return Status::Error("--mail-user: one line of at most " + std::to_string(kMaxMailUser) +
                         " bytes");
  }
  return Status::Ok();
}

}  // namespace gshare
