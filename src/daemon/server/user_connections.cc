#include "daemon/server/user_connections.h"

#include <spdlog/spdlog.h>

namespace gshare {
namespace {

constexpr Millis kExemptionKept = std::chrono::minutes(1);

}  // namespace

bool UserConnections::Exempt(uid_t uid, User& user, TimePoint now) {
  if (uid == 0) return true;
  if (!user.checked || now >= *user.checked + kExemptionKept) {
    user.exempt = options_.exempt && options_.exempt(uid);
    user.checked = now;
  }
  return user.exempt;
}

bool UserConnections::Admit(uid_t uid, pid_t pid, TimePoint now) {
  User& user = users_[uid];
  if (options_.per_user == 0 || user.open < options_.per_user || Exempt(uid, user, now)) {
    ++user.open;
    return true;
  }
  ++refused_;
  if (std::optional<uint64_t> count = refusals_.Note(uid, now)) {
    if (*count == 1) {
      spdlog::warn(
          "refused a connection of uid {} (pid {}): it has {} open, at most {} per user "
          "([limits] connections_per_user); its next refusals are counted and logged once a "
          "minute",
          uid, pid, user.open, options_.per_user);
    } else {
      spdlog::warn("refused {} connections of uid {} in the last minute: at most {} per user",
                   *count, uid, options_.per_user);
    }
  }
  return false;
}

void UserConnections::Closed(uid_t uid) {
  auto it = users_.find(uid);
  if (it == users_.end()) return;
  if (it->second.open > 0) --it->second.open;
  if (it->second.open == 0) users_.erase(it);
}

void UserConnections::Flush(TimePoint now) {
  refusals_.Flush(now, [this](uid_t uid, uint64_t count, const std::string&) {
    spdlog::warn("refused {} connections of uid {} in the last minute: at most {} per user", count,
                 uid, options_.per_user);
  });
}

size_t UserConnections::Open(uid_t uid) const {
  auto it = users_.find(uid);
  return it == users_.end() ? 0 : it->second.open;
}

}  // namespace gshare
