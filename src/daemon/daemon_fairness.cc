// Fair share between users (docs/design.md, "Fair share between users"): what the daemon feeds
// the policy about each user, and each user's share as `gshare status` shows it. The order
// itself is the policy's: Arbiter (the lease) and Admit (the queue).

#include <nlohmann/json.hpp>

#include "base/user_name.h"
#include "daemon/daemon.h"

namespace gshare {

std::map<uid_t, int> Daemon::RunningPerUser() const {
  // The same jobs as RunningPerSlot: preloaded processes outside gshare do not count.
  std::map<uid_t, int> running;
  for (const auto& [id, job] : table_.jobs) {
    if (!job->ended && !job->adhoc) ++running[job->record.uid];
  }
  return running;
}

nlohmann::json Daemon::UsersJson(TimePoint now) const {
  struct Share {
    int running = 0;
    int pending = 0;
    double lease_seconds = 0;
  };
  std::map<uid_t, Share> users;
  double total = 0;
  for (const auto& [id, job] : table_.jobs) {
    if (job->ended) continue;
    Share& s = users[job->record.uid];
    ++s.running;
    double lease = arbiter_.Usage(id, now).lease_seconds;
    s.lease_seconds += lease;
    total += lease;
  }
  for (const auto& [id, r] : queue_->pending()) ++users[r.uid].pending;
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [uid, s] : users) {
    list.push_back({{"uid", uid},
                    {"user", UserName(uid)},
                    {"running", s.running},
                    {"pending", s.pending},
                    {"lease_seconds", s.lease_seconds},
                    {"lease_share", total > 0 ? s.lease_seconds / total : 0.0}});
  }
  return list;
}

}  // namespace gshare
