// Daemon: gshare's arbiter process. Serves the Unix socket with one poll() loop: shim
// connections (lease requests, releases, memory reports), runner connections (`gshare run`
// and the supervisors of submitted jobs: registration, start, end) and one-shot CLI requests
// (status, submit, job control, clean, scheduler on/off, shutdown). The parts that give them
// meaning are DaemonParts, built once the database is open. Single-threaded: everything below
// runs on the thread that called Run().
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "daemon/observe/metrics_publisher.h"
#include "daemon/server/daemon_parts.h"
#include "daemon/server/log_throttle.h"
#include "daemon/server/peer_table.h"
#include "daemon/server/request_router.h"
#include "daemon/server/systemd_notify.h"
#include "daemon/server/user_connections.h"
#include "daemon/state/connection.h"
#include "daemon/state/daemon_options.h"
#include "daemon/state/requester.h"
#include "ipc/frame_io.h"

namespace gshare {

class Daemon : private PeerEvents {
 public:
  // `clock` (outlives the daemon) is what every lease, quantum and job time is read from.
  explicit Daemon(DaemonOptions options, Clock& clock = SystemClock());
  ~Daemon() override;
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Takes the single-instance locks (the database's, the socket's), binds the socket, opens the
  // database and serves until SIGTERM/SIGINT or a shutdown request. `ready_fd` (or -1)
  // receives 'R' once serving (and $NOTIFY_SOCKET READY=1), or 'B' when another daemon holds
  // a lock: then Run returns an error naming that daemon's pid and socket, and busy() is true.
  // Errors before serving are returned; after that, failures are logged and served past.
  Status Run(int ready_fd);
  bool busy() const { return busy_; }

 private:
  Status Setup(int ready_fd, bool* busy);
  void Loop();
  // PeerEvents: the PeerTable's peers become connections (this user's and root's only, each
  // user's up to [limits] connections_per_user), their frames are dispatched, their losses
  // dropped, their erasure forgotten.
  bool OnAccepted(ConnId id, pid_t pid, uid_t uid) override;
  void OnFrame(ConnId id, const Frame& frame) override;
  void OnLost(ConnId id, const std::string& why) override;
  void OnReaped(ConnId id) override;
  // Marks the connection closing and releases what it held; safe to call again, and from
  // anything it triggers (the connection stays in the table until the PeerTable reaps it).
  // `why` is logged, at most 10 lines per user and minute (the rest counted).
  void Drop(ConnId id, const std::string& why);
  // Logs the drops held back whose minute has ended by `now`.
  void FlushDrops(TimePoint now);
  // Queues `bytes` for the peer (PeerTable::Send). False when the peer is gone or closing, or
  // when it lets its output grow past its bound (it is dropped then).
  bool Send(ConnId id, std::string_view bytes);

  TimePoint Now() const { return clock_.Now(); }
  double WallNow() const { return clock_.WallNow(); }

  DaemonOptions options_;
  Clock& clock_;
  std::unique_ptr<DaemonParts> parts_;     // once the database is open
  std::unique_ptr<RequestRouter> router_;  // over parts_
  int listen_fd_ = -1;
  PeerTable peers_{this, PeerTable::Limits{}, proto::kMaxRequestPayload};
  UserConnections user_conns_{
      {static_cast<size_t>(options_.config.limits.connections_per_user),
       [this](uid_t uid) { return IsAdmin(parts_->access.rules(), RequesterOf(uid)); }}};
  LogThrottle drops_{10, std::chrono::minutes(1)};
  int lock_fd_ = -1;
  int socket_lock_fd_ = -1;
  bool busy_ = false;
  SystemdNotify notify_;
  int signal_pipe_[2] = {-1, -1};
  bool stopping_ = false;
  MetricsPublisher metrics_{options_.config.metrics,
                            [this] { return parts_->status.MetricsText(); }};
};

}  // namespace gshare
