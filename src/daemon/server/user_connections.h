// UserConnections: how many connections each user holds open on the daemon, and the cap on
// them ([limits] connections_per_user, docs/cli.md "Limits"): the system daemon serves every
// user, and one user's idle connections must not take the descriptors and the connection limit
// that everyone's `gshare submit` and every job's shim need. Root and the admins are not
// capped. A refused connection is the caller's to close; the refusals are logged at most once
// per user per minute, with their count. Time comes in as arguments; not thread-safe: the
// daemon's event loop is its only caller.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <map>
#include <optional>

#include "daemon/server/log_throttle.h"
#include "policy/types.h"

namespace gshare {

class UserConnections {
 public:
  struct Options {
    size_t per_user = 256;  // open connections of a user who is not an admin; 0: no cap
    // Whether `uid` is exempt (root, an admin). Asked only of a user at the cap, and its answer
    // kept for a minute: it may read the group database.
    std::function<bool(uid_t uid)> exempt;
  };

  explicit UserConnections(Options options) : options_(std::move(options)) {}

  // Whether a new connection of `uid` (process `pid`) may stay open; counted when it may
  // (Closed must follow), logged (throttled) when it may not.
  bool Admit(uid_t uid, pid_t pid, TimePoint now);
  // A connection Admit took is gone.
  void Closed(uid_t uid);
  // Logs the refusals held back whose minute has ended.
  void Flush(TimePoint now);
  // When Flush next has something to log.
  std::optional<TimePoint> NextFlush() const { return refusals_.NextFlush(); }

  size_t Open(uid_t uid) const;
  uint64_t refused() const { return refused_; }

 private:
  struct User {
    size_t open = 0;
    bool exempt = false;               // as last checked
    std::optional<TimePoint> checked;  // when; none: never
  };
  bool Exempt(uid_t uid, User& user, TimePoint now);

  Options options_;
  std::map<uid_t, User> users_;  // users with connections open (or an exemption remembered)
  LogThrottle refusals_{1, std::chrono::minutes(1)};
  uint64_t refused_ = 0;
};

}  // namespace gshare
