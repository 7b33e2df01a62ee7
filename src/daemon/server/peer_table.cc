// The one place a peer's descriptor is read, written and closed. A peer's life ends in two
// steps so that nothing is freed under a caller: Close/Lose mark it (nothing is read,
// written or dispatched again), Reap closes and erases it after the event that ended it.
#include "daemon/server/peer_table.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <spdlog/spdlog.h>

namespace gshare {
namespace {

constexpr size_t kReadChunk = 64 * 1024;

}  // namespace

PeerTable::PeerTable(PeerEvents* events, Limits limits, uint32_t max_payload)
    : events_(events),
      limits_(limits),
      max_payload_(max_payload),
      silent_why_(fmt::format("it sent no request within {:g} s of connecting",
                              std::chrono::duration<double>(limits.first_frame_deadline).count())) {
}

PeerTable::~PeerTable() {
  for (auto& [id, p] : peers_) close(p->fd);
}

PeerTable::Peer* PeerTable::Open(ConnId id) {
  auto it = peers_.find(id);
  return it == peers_.end() || it->second->closing ? nullptr : it->second.get();
}

bool PeerTable::IsOpen(ConnId id) const {
  auto it = peers_.find(id);
  return it != peers_.end() && !it->second->closing;
}

void PeerTable::Accept(int listen_fd, TimePoint now) {
  if (accept_paused_until_ && now >= *accept_paused_until_) accept_paused_until_.reset();
  if (accept_paused_until_) return;
  for (;;) {
    int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        spdlog::warn("cannot accept connections ({}): pausing {} ms", strerror(errno),
                     limits_.accept_backoff.count());
        accept_paused_until_ = now + limits_.accept_backoff;
      }
      return;
    }
    ucred cred{};
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
      close(fd);
      continue;
    }
    if (peers_.size() >= limits_.max_connections) {
      close(fd);
      ++refused_;
      if (std::optional<uint64_t> n = refusals_.Note(cred.uid, now)) {
        spdlog::warn(
            "refused {} connection{} of uid {} (pid {}): {} connections open, the most "
            "the daemon takes; further refusals of the uid are logged once a minute",
            *n, *n == 1 ? "" : "s", cred.uid, cred.pid, peers_.size());
      }
      continue;
    }
    Adopt(fd, cred.pid, cred.uid, now);
  }
}

ConnId PeerTable::Adopt(int fd, pid_t pid, uid_t uid, TimePoint now) {
  const ConnId id = next_id_++;
  if (!events_->OnAccepted(id, pid, uid)) {
    close(fd);
    return id;
  }
  auto p = std::make_unique<Peer>(max_payload_);
  p->fd = fd;
  p->uid = uid;
  p->silent_since = now;
  peers_[id] = std::move(p);
  ++uid_bytes_[uid].peers;
  return id;
}

void PeerTable::PollSet(int listen_fd, TimePoint now, std::vector<pollfd>* fds,
                        std::vector<ConnId>* ids) {
  if (accept_paused_until_ && now >= *accept_paused_until_) accept_paused_until_.reset();
  fds->push_back({accept_paused_until_ ? -1 : listen_fd, POLLIN, 0});
  for (auto& [id, p] : peers_) {
    if (p->closing) continue;
    // A peer with replies it has not taken sends nothing more we read (back-pressure);
    // exempt peers always read, and their messages must not wait behind their reports.
    short events = Blocked(*p) ? POLLOUT : POLLIN;
    if (p->exempt && !p->out.empty()) events = POLLIN | POLLOUT;
    fds->push_back({p->fd, events, 0});
    ids->push_back(id);
  }
}

void PeerTable::OnPollEvents(ConnId id, short revents, TimePoint now) {
  Peer* p = Open(id);
  if (p == nullptr || revents == 0) return;
  if (!p->out.empty()) {
    Flush(id, now);
    // Requests that waited for this peer to take its output go on now.
    if (Peer* q = Open(id); q != nullptr && !Blocked(*q) && q->in.buffered() != 0) {
      Dispatch(id, now);
    }
  }
  if ((revents & (POLLIN | POLLHUP | POLLERR)) != 0 && Open(id) != nullptr) Read(id, now);
}

void PeerTable::Read(ConnId id, TimePoint now) {
  char buf[kReadChunk];
  size_t taken = 0;
  while (taken < limits_.read_per_event) {
    Peer* p = Open(id);
    // Back-pressure: a peer that does not take its replies is not read any further.
    if (p == nullptr || Blocked(*p)) return;
    ssize_t n = recv(p->fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      Lose(id, "");
      return;
    }
    if (n < 0) return;
    UidBytes& mine = uid_bytes_[p->uid];
    if (mine.in + static_cast<size_t>(n) > limits_.max_buffered_input_per_uid) {
      Lose(id, "too much unprocessed input on its user's connections");
      return;
    }
    if (buffered_in_ + static_cast<size_t>(n) > limits_.max_buffered_input) {
      Lose(id, "too much unprocessed input on all connections");
      return;
    }
    taken += static_cast<size_t>(n);
    p->in.Append(buf, static_cast<size_t>(n));
    buffered_in_ += static_cast<size_t>(n);
    mine.in += static_cast<size_t>(n);
    Dispatch(id, now);
    if (static_cast<size_t>(n) < sizeof buf) return;
  }
}

void PeerTable::Dispatch(ConnId id, TimePoint now) {
  Peer* p = Open(id);
  if (p == nullptr) return;
  // The peer stays in peers_ until Reap, so `p` outlives every callback below.
  const size_t before = p->in.buffered();
  UidBytes& mine = uid_bytes_[p->uid];
  auto account = [&] {
    buffered_in_ = buffered_in_ - before + p->in.buffered();
    mine.in = mine.in - before + p->in.buffered();
  };
  while (!p->closing && !Blocked(*p)) {
    auto next = p->in.Next();
    if (!next.ok()) {
      account();
      Lose(id, "malformed frame (" + next.status().message() + ")");
      return;
    }
    if (!next.value()) break;
    p->silent_since.reset();
    events_->OnFrame(id, *next.value());
  }
  account();
  if (p->closing) return;
  if (p->in.buffered() == 0) {
    p->partial_since.reset();
  } else if (!p->partial_since && !Blocked(*p)) {
    p->partial_since = now;  // an incomplete frame (complete ones wait for the output)
  }
}

bool PeerTable::Send(ConnId id, std::string_view bytes, TimePoint now) {
  Peer* p = Open(id);
  if (p == nullptr) return false;
  if (p->out.size() + bytes.size() > limits_.max_output_bytes) {
    Lose(id, "it does not read what the daemon sends");
    return false;
  }
  UidBytes& mine = uid_bytes_[p->uid];
  if (!p->exempt && mine.out + bytes.size() > limits_.max_output_bytes_per_uid) {
    Lose(id, "its user's connections do not read what the daemon sends");
    return false;
  }
  if (p->out.empty()) p->out_since = now;
  p->out.append(bytes);
  mine.out += bytes.size();
  Flush(id, now);
  return !p->closing;
}

bool PeerTable::SendWithFd(ConnId id, std::string_view bytes, int fd, TimePoint now) {
  Peer* p = Open(id);
  if (p == nullptr || !p->out.empty() || bytes.empty()) return false;
  iovec io{const_cast<char*>(bytes.data()), bytes.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  ssize_t n;
  do {
    n = sendmsg(p->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  return static_cast<size_t>(n) == bytes.size() ||
         Send(id, bytes.substr(static_cast<size_t>(n)), now);
}

void PeerTable::Flush(ConnId id, TimePoint now) {
  Peer* p = Open(id);
  while (p != nullptr && !p->out.empty() && !p->closing) {
    ssize_t n = send(p->fd, p->out.data(), p->out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {
      // The peer is gone: what it held is reclaimed now (a lease holder's turn moves on).
      Lose(id, "");
      return;
    }
    p->out.erase(0, static_cast<size_t>(n));
    uid_bytes_[p->uid].out -= static_cast<size_t>(n);
    p->out_since = now;
  }
}

void PeerTable::Close(ConnId id) {
  Peer* p = Open(id);
  if (p == nullptr) return;
  p->closing = true;
  uid_bytes_[p->uid].out -= p->out.size();
  p->out.clear();
}

void PeerTable::Lose(ConnId id, const std::string& why) {
  if (Open(id) == nullptr) return;
  Close(id);  // first: whatever the owner does below sees it closed
  events_->OnLost(id, why);
}

void PeerTable::SetExempt(ConnId id) {
  if (Peer* p = Open(id)) p->exempt = true;
}

void PeerTable::Reap() {
  for (auto it = peers_.begin(); it != peers_.end();) {
    if (!it->second->closing) {
      ++it;
      continue;
    }
    const ConnId id = it->first;
    buffered_in_ -= it->second->in.buffered();
    auto mine = uid_bytes_.find(it->second->uid);
    mine->second.in -= it->second->in.buffered();
    if (--mine->second.peers == 0) uid_bytes_.erase(mine);
    close(it->second->fd);
    it = peers_.erase(it);
    events_->OnReaped(id);
  }
}

std::optional<TimePoint> PeerTable::Expire(TimePoint now) {
  std::optional<TimePoint> next;
  std::vector<std::pair<ConnId, std::string>> late;
  for (auto& [id, p] : peers_) {
    if (p->closing) continue;
    // Each deadline with what a peer past it is lost for, the first to pass first.
    std::optional<TimePoint> due;
    const char* why = nullptr;
    auto deadline = [&](std::optional<TimePoint> since, Millis limit, const char* what) {
      if (since && (!due || *since + limit < *due)) {
        due = *since + limit;
        why = what;
      }
    };
    deadline(p->partial_since, limits_.peer_deadline, "a frame left incomplete");
    if (!p->out.empty()) {
      deadline(p->out_since, limits_.peer_deadline, "it does not read what the daemon sends");
    }
    deadline(p->silent_since, limits_.first_frame_deadline, silent_why_.c_str());
    if (!due) continue;
    if (now >= *due) {
      late.emplace_back(id, why);
    } else {
      next = next ? std::min(*next, *due) : due;
    }
  }
  // Lost after the scan: the owner's OnLost may send to (and so lose) other peers.
  for (const auto& [id, why] : late) Lose(id, why);
  return next;
}

void PeerTable::FlushAll(Millis budget) {
  const auto until = std::chrono::steady_clock::now() + budget;
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<ConnId> ids;
    for (auto& [id, p] : peers_) {
      if (!p->closing && !p->out.empty()) {
        fds.push_back({p->fd, POLLOUT, 0});
        ids.push_back(id);
      }
    }
    const auto left = std::chrono::ceil<Millis>(until - std::chrono::steady_clock::now()).count();
    if (fds.empty() || left <= 0) return;
    if (poll(fds.data(), fds.size(), static_cast<int>(left)) <= 0) return;
    for (ConnId id : ids) Flush(id, std::chrono::steady_clock::now());
  }
}

}  // namespace gshare
