// UserTurns: which user had a turn least recently, the memory behind fair share between users
// (docs/design.md, "Fair share between users"). The arbiter keeps one per GPU lease (a turn is
// a grant of the lease), the batch queue one for admission (a turn is a job's start). A plain
// value: no I/O; not thread-safe, the daemon's event loop is its only caller.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>

namespace gshare {

class UserTurns {
 public:
  // The sequence number of `uid`'s latest turn; 0 when it never had one. Lower goes first:
  // the user served least recently, and before all of them a user never served.
  uint64_t Last(uid_t uid) const {
    auto it = last_.find(uid);
    return it == last_.end() ? 0 : it->second;
  }
  // A turn went to `uid` now: it goes behind every other user.
  void Took(uid_t uid) { last_[uid] = ++count_; }

 private:
  uint64_t count_ = 0;
  // One entry per user ever served: bounded by the machine's users.
  std::map<uid_t, uint64_t> last_;
};

}  // namespace gshare
