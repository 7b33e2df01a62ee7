// One client connection to the daemon with deadlines on its requests (docs/cli.md "A daemon
// that does not answer"), for a runner that keeps its connection for the job's life. The
// daemon answers a connection's requests in order, so a request not answered in time leaves
// its reply owed: it is read and dropped before the reply to the next one. One thread at a
// time.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>

#include "base/status.h"
#include "gshare/protocol.h"
#include "ipc/frame_io.h"

namespace gshare {

class DaemonLink {
 public:
  // Takes `fd`, a connected socket, and closes it when destroyed. `timeout`: the patience of
  // Request.
  DaemonLink(int fd, std::chrono::milliseconds timeout) : fd_(fd), timeout_(timeout) {}
  ~DaemonLink();
  DaemonLink(const DaemonLink&) = delete;
  DaemonLink& operator=(const DaemonLink&) = delete;

  // Sends `request` and returns the daemon's reply (ParseReply), read within the timeout
  // after the replies owed before it. Errors: IsDaemonTimeout when it did not come in time
  // (its reply is owed then), IsLostConnection, the daemon's own refusal.
  Result<nlohmann::json> Request(proto::MsgType type, const nlohmann::json& request);
  // Sends `request` without waiting for its reply, which is owed.
  Status Post(proto::MsgType type, const nlohmann::json& request);
  // The reply to the last request sent: the replies owed are read in order within `deadline`
  // (nullopt: however long it takes), the last one returned. An error when none is owed.
  Result<nlohmann::json> Await(Deadline deadline);
  // The next frame the daemon sends, of any type (a pending `gshare run`'s kRunAdmitted),
  // however long it takes; nothing may be owed.
  Result<Frame> Next();
  // True when a frame (or the end of the connection) can be read now without waiting.
  bool Readable() const;

  int fd() const { return fd_; }
  int owed() const { return owed_; }

 private:
  int fd_;
  std::chrono::milliseconds timeout_;
  int owed_ = 0;  // replies the daemon still owes, oldest first
};

}  // namespace gshare
