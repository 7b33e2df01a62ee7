// Fair share between users (docs/design.md, "Fair share between users"): what the daemon feeds
// the policy about each user (each user's share as `gshare status` shows it is
// StatusReporter's). The order itself is the policy's: Arbiter (the lease) and Admit (the queue).
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

}  // namespace gshare
