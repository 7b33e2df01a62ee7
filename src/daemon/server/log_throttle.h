// LogThrottle: how often one user's repeated event (a refused connection, a dropped one) may
// write a line to the daemon's log. Any user may make such events as fast as they can connect,
// and a line per event would fill the log (and the disk) for everyone. Per uid and window: the
// first `burst` events are logged one by one, the rest are counted and reported in one line
// when the window ends. Time comes in as arguments; not thread-safe: the daemon's event loop
// is its only caller.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "policy/types.h"

namespace gshare {

class LogThrottle {
 public:
  // `burst` (>= 1) events of one uid are logged per `window`.
  LogThrottle(size_t burst, Millis window) : burst_(burst == 0 ? 1 : burst), window_(window) {}

  // An event of `uid` now, `detail` saying what it was. Returns how many events to log now in
  // one line: 1 (this one), more than 1 (this one and those held back in the window that just
  // ended: the line reports them together), or nullopt (held back, counted).
  std::optional<uint64_t> Note(uid_t uid, TimePoint now, const std::string& detail = "");
  // Calls report(uid, count, last detail) for each uid whose window has ended with events held
  // back; a uid reported now stays throttled for one more window (one line per window at most).
  // Forgets the uids with nothing held back whose window has ended.
  void Flush(TimePoint now,
             const std::function<void(uid_t uid, uint64_t count, const std::string& last)>& report);
  // The earliest end of a window with events held back (when Flush has something to report).
  std::optional<TimePoint> NextFlush() const;
  size_t tracked() const { return uids_.size(); }

 private:
  struct Window {
    TimePoint end;
    size_t logged = 0;  // events logged one by one in this window
    uint64_t held = 0;  // events counted, not logged yet
    std::string last;   // the last held event's detail
  };
  size_t burst_;
  Millis window_;
  std::map<uid_t, Window> uids_;
};

}  // namespace gshare
