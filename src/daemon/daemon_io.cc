// The daemon's event loop and its connections: accept, non-blocking reads and writes with
// bounded buffers, deadlines for stalled peers, and the one place where a connection's life
// ends (Drop marks it, Reap erases it). What the frames mean is dispatched to daemon.cc.
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <spdlog/spdlog.h>
#include <vector>

#include "daemon/daemon.h"
#include "ipc/job_json.h"

namespace gshare {
namespace {

// Reads per readiness event of one peer, so that one large request does not take whole
// poll rounds from everyone else, nor 500 of them.
constexpr size_t kReadChunk = 64 * 1024;
constexpr size_t kReadPerEvent = 1u << 20;

bool IsJsonRequest(proto::MsgType t) { return proto::FixedPayloadSize(t) == 0; }

}  // namespace

void Daemon::Loop() {
  // Every connection is a descriptor: take the hard limit, the soft one is often 1024.
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
  }
  std::vector<pollfd> fds;
  std::vector<ConnId> ids;
  while (!stopping_) {
    const TimePoint now = Now();
    std::optional<TimePoint> deadline = arbiter_.NextDeadline();
    auto earliest = [&deadline](std::optional<TimePoint> t) {
      if (t) deadline = deadline ? std::min(*deadline, *t) : t;
    };
    earliest(QueueDeadline());
    earliest(next_retention_);
    earliest(ExpirePeers(now));
    Reap();
    if (accept_paused_until_ && now >= *accept_paused_until_) accept_paused_until_.reset();
    earliest(accept_paused_until_);

    fds.clear();
    ids.clear();
    fds.push_back({accept_paused_until_ ? -1 : listen_fd_, POLLIN, 0});
    fds.push_back({signal_pipe_[0], POLLIN, 0});
    fds.push_back({checkpoint_.fd(), POLLIN, 0});  // -1 (ignored) until started
    for (auto& [id, c] : conns_) {
      // A peer with replies it has not taken sends nothing more we read (back-pressure);
      // shims always read, and their lease messages must not wait behind their reports.
      short events = c->out.empty() ? POLLIN : POLLOUT;
      if (c->kind == Connection::Kind::kShim) events = c->out.empty() ? POLLIN : POLLIN | POLLOUT;
      fds.push_back({c->fd, events, 0});
      ids.push_back(id);
    }
    int timeout_ms = -1;
    if (deadline) {
      auto ms = std::chrono::ceil<Millis>(*deadline - Now()).count();
      timeout_ms = static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(ms, 60000)));
    }
    int n = poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0 && errno != EINTR) {
      spdlog::error("poll: {}", strerror(errno));
      continue;
    }
    if (fds[1].revents != 0) {
      spdlog::info("signal received: shutting down");
      stopping_ = true;
    }
    for (size_t i = 3; i < fds.size(); ++i) {
      const short ev = fds[i].revents;
      if (ev == 0) continue;
      if (Connection* c = Live(ids[i - 3]); c != nullptr && !c->out.empty()) {
        Flush(*c);
        // Requests that waited for this peer to take its replies go on now.
        if (!Blocked(*c) && c->in.buffered() != 0) ProcessInput(*c);
      }
      if ((ev & (POLLIN | POLLHUP | POLLERR)) != 0 && Live(ids[i - 3]) != nullptr) {
        OnReadable(ids[i - 3]);
      }
    }
    if (fds[0].revents != 0) Accept();
    if (fds[2].revents != 0) OnCheckpointReplies();
    Apply(arbiter_.Tick(Now()));
    CheckpointTick();
    QueueTick(Now());
    RetentionTick(Now());
    Reap();
  }
  FlushBeforeExit();
}

void Daemon::Accept() {
  for (;;) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        spdlog::warn("cannot accept connections ({}): pausing {} ms", strerror(errno),
                     kAcceptBackoff.count());
        accept_paused_until_ = Now() + kAcceptBackoff;
      }
      return;
    }
    ucred cred{};
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
        (cred.uid != getuid() && cred.uid != 0)) {
      spdlog::warn("refused a connection from uid {}", cred.uid);
      close(fd);
      continue;
    }
    if (conns_.size() >= kMaxConnections) {
      spdlog::warn("refused a connection of pid {}: {} connections open", cred.pid,
                   conns_.size());
      close(fd);
      continue;
    }
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    c->id = next_conn_++;
    c->pid = cred.pid;
    c->uid = cred.uid;
    conns_[c->id] = std::move(c);
  }
}

void Daemon::OnReadable(ConnId id) {
  Connection& c = *conns_.at(id);
  char buf[kReadChunk];
  size_t taken = 0;
  while (taken < kReadPerEvent && !c.closing) {
    // Back-pressure: a peer that does not take its replies is not read any further.
    if (Blocked(c)) return;
    ssize_t n = recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      Drop(id, "");
      return;
    }
    if (n < 0) break;
    if (buffered_in_ + static_cast<size_t>(n) > kMaxBufferedInput) {
      Drop(id, "too much unprocessed input on all connections");
      return;
    }
    taken += static_cast<size_t>(n);
    c.in.Append(buf, static_cast<size_t>(n));
    buffered_in_ += static_cast<size_t>(n);
    ProcessInput(c);
    if (c.closing || stopping_) return;
    if (static_cast<size_t>(n) < sizeof buf) break;
  }
}

bool Daemon::Blocked(const Connection& c) const {
  return !c.out.empty() && c.kind != Connection::Kind::kShim;
}

void Daemon::ProcessInput(Connection& c) {
  const size_t before = c.in.buffered();
  while (!c.closing && !stopping_ && !Blocked(c)) {
    auto next = c.in.Next();
    if (!next.ok()) {
      buffered_in_ = buffered_in_ - before + c.in.buffered();  // Reap takes off the rest
      Drop(c.id, "malformed frame (" + next.status().message() + ")");
      return;
    }
    if (!next.value()) break;
    const Frame& f = *next.value();
    try {
      Dispatch(c, f);
    } catch (const std::exception& e) {
      // A handler's bug must cost one request, not the daemon.
      spdlog::error("request type {} of pid {} failed: {}", static_cast<int>(f.type), c.pid,
                    e.what());
      if (IsJsonRequest(f.type)) {
        Reply(c, ErrorReply(std::string("internal error: ") + e.what()));
      } else {
        Drop(c.id, "internal error");
      }
    }
  }
  buffered_in_ = buffered_in_ - before + c.in.buffered();
  if (c.closing) return;
  if (c.in.buffered() == 0) {
    c.partial_since.reset();
  } else if (!c.partial_since && !Blocked(c)) {
    c.partial_since = Now();  // an incomplete frame (complete ones wait for the output)
  }
}

Daemon::Connection* Daemon::Live(ConnId id) {
  auto it = conns_.find(id);
  return it == conns_.end() || it->second->closing ? nullptr : it->second.get();
}

void Daemon::Drop(ConnId id, const std::string& why) {
  Connection* cp = Live(id);
  if (cp == nullptr) return;
  Connection& c = *cp;
  c.closing = true;  // first: whatever runs below sees it gone
  c.out.clear();
  c.watched.clear();
  if (!why.empty()) spdlog::warn("dropping connection of pid {}: {}", c.pid, why);
  if (c.kind == Connection::Kind::kShim) {
    Apply(arbiter_.Disconnected(id, Now()));
    ledger_.Forget(id);
    stagger_.Forget(c.job);
    for (const auto& [gpu, info] : gpus_) {
      UpdateSharing(gpu);
      UpdateGapWatch(gpu);
      MakeIncumbentRoom(gpu);
    }
    auto jit = jobs_.find(c.job);
    if (jit != jobs_.end()) {
      jit->second->shims.erase(id);
      if (jit->second->adhoc && jit->second->shims.empty()) {
        FinishJob(c.job, JobState::kCompleted, std::nullopt, std::nullopt, "");
      }
    }
  } else if (c.kind == Connection::Kind::kRunner) {
    auto jit = jobs_.find(c.job);
    if (pending_.count(c.job) != 0) {
      // A `gshare run` that stopped waiting for admission (Ctrl-C, a hang-up).
      Status st = CancelJob(c.job, false);
      if (!st.ok()) spdlog::error("job {}: {}", c.job, st.message());
    } else if (jit != jobs_.end() && !jit->second->ended && !stopping_) {
      ActiveJob& job = *jit->second;
      if (job.record.kind == "submit") {
        // Its supervisor died (kill -9): nothing enforces its limits or reports its end now.
        SignalJob(job, SIGKILL);
        FinishJob(c.job, JobState::kFailed, std::nullopt, std::nullopt, "job supervisor ended unexpectedly");
      } else {
        FinishJob(c.job, JobState::kFailed, std::nullopt, std::nullopt, "gshare run exited early");
      }
    }
  }
}

void Daemon::Reap() {
  for (auto it = conns_.begin(); it != conns_.end();) {
    if (!it->second->closing) {
      ++it;
      continue;
    }
    const JobId job = it->second->job;
    buffered_in_ -= it->second->in.buffered();
    close(it->second->fd);
    it = conns_.erase(it);
    if (job != 0) ForgetJobIfDone(job);
  }
}

bool Daemon::Send(ConnId id, std::string_view bytes) {
  Connection* c = Live(id);
  return c != nullptr && Send(*c, bytes);
}

bool Daemon::Send(Connection& c, std::string_view bytes) {
  if (c.closing) return false;
  if (c.out.size() + bytes.size() > kMaxOutputBytes) {
    Drop(c.id, "it does not read what the daemon sends");
    return false;
  }
  if (c.out.empty()) c.out_since = Now();
  c.out.append(bytes);
  Flush(c);
  return !c.closing;
}

void Daemon::Flush(Connection& c) {
  while (!c.out.empty() && !c.closing) {
    ssize_t n = send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {
      // The peer is gone: what it held is reclaimed now (a lease holder's turn moves on).
      Drop(c.id, "");
      return;
    }
    c.out.erase(0, static_cast<size_t>(n));
    c.out_since = Now();
  }
}

void Daemon::Reply(Connection& c, const std::string& json_text) {
  Send(c, EncodeFrame(proto::MsgType::kReply, json_text));
}

std::optional<TimePoint> Daemon::ExpirePeers(TimePoint now) {
  std::optional<TimePoint> next;
  for (auto& [id, c] : conns_) {
    if (c->closing) continue;
    std::optional<TimePoint> due;
    if (c->partial_since) due = *c->partial_since + kPeerDeadline;
    if (!c->out.empty()) {
      TimePoint out_due = c->out_since + kPeerDeadline;
      due = due ? std::min(*due, out_due) : out_due;
    }
    if (!due) continue;
    if (now >= *due) {
      Drop(id, c->partial_since && now >= *c->partial_since + kPeerDeadline
                   ? "a frame left incomplete"
                   : "it does not read what the daemon sends");
    } else {
      next = next ? std::min(*next, *due) : due;
    }
  }
  return next;
}

void Daemon::FlushBeforeExit() {
  const TimePoint until = Now() + std::chrono::seconds(1);
  for (;;) {
    std::vector<pollfd> fds;
    for (auto& [id, c] : conns_) {
      if (!c->closing && !c->out.empty()) fds.push_back({c->fd, POLLOUT, 0});
    }
    const auto left = std::chrono::ceil<Millis>(until - Now()).count();
    if (fds.empty() || left <= 0) return;
    if (poll(fds.data(), fds.size(), static_cast<int>(left)) <= 0) return;
    for (auto& [id, c] : conns_) {
      if (!c->closing && !c->out.empty()) Flush(*c);
    }
  }
}

}  // namespace gshare
