// HTTP/1.0 and 1.1 as much as a scraper needs: one request per connection, no body read,
// the response sent with Connection: close and the connection closed after it. Anything a
// client does wrong ends that client only.
#include "daemon/observe/metrics_endpoint.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace gshare {
namespace {

std::string Response(const std::string& status, const std::string& body, bool head_only,
                     const char* type = "text/plain; charset=utf-8") {
  std::string r = "HTTP/1.1 " + status + "\r\nContent-Type: " + type +
                  "\r\nContent-Length: " + std::to_string(body.size()) +
                  "\r\nConnection: close\r\n\r\n";
  if (!head_only) r += body;
  return r;
}

}  // namespace

MetricsEndpoint::MetricsEndpoint(Body body, Limits limits)
    : body_(std::move(body)), limits_(limits) {}

MetricsEndpoint::~MetricsEndpoint() {
  for (Client& c : clients_) close(c.fd);
  if (listen_fd_ >= 0) close(listen_fd_);
}

Status MetricsEndpoint::Listen(const ListenAddress& addr, const std::string& name) {
  const int fd = socket(addr.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::Error("metrics: socket: " + std::string(strerror(errno)));
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&addr.addr), addr.len) != 0 ||
      listen(fd, 64) != 0) {
    const int err = errno;
    close(fd);
    return Status::Error("metrics: cannot listen on " + name + ": " + strerror(err));
  }
  listen_fd_ = fd;
  return Status::Ok();
}

int MetricsEndpoint::port() const {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if (listen_fd_ < 0 || getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    return 0;
  }
  return a.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&a)->sin6_port)
                                 : ntohs(reinterpret_cast<sockaddr_in*>(&a)->sin_port);
}

void MetricsEndpoint::PollSet(std::vector<pollfd>* fds) const {
  if (listen_fd_ < 0) return;
  fds->push_back({listen_fd_, POLLIN, 0});
  for (const Client& c : clients_) {
    fds->push_back({c.fd, static_cast<short>(c.responding ? POLLOUT : POLLIN), 0});
  }
}

void MetricsEndpoint::OnPoll(const std::vector<pollfd>& fds, size_t first, TimePoint now) {
  if (listen_fd_ < 0 || first >= fds.size()) return;
  // Clients first, by position: Accept below appends to clients_.
  std::vector<bool> keep(clients_.size(), true);
  for (size_t i = 0; i < clients_.size() && first + 1 + i < fds.size(); ++i) {
    const short ev = fds[first + 1 + i].revents;
    if (ev == 0) continue;
    Client& c = clients_[i];
    if (!c.responding) {
      keep[i] = Read(c, now);
    } else {
      keep[i] = (ev & (POLLERR | POLLHUP | POLLNVAL)) == 0 && Write(c);
    }
  }
  std::vector<Client> kept;
  for (size_t i = 0; i < clients_.size(); ++i) {
    if (keep[i]) {
      kept.push_back(std::move(clients_[i]));
    } else {
      close(clients_[i].fd);
    }
  }
  clients_ = std::move(kept);
  if (fds[first].revents != 0) Accept(now);
}

void MetricsEndpoint::Accept(TimePoint now) {
  for (;;) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or out of descriptors: poll tells us again
    if (clients_.size() >= limits_.max_clients) {
      // Full: the oldest client still sending its request goes (a slow or idle one), so
      // that clients that never finish cannot lock scrapers out; else the new one does.
      auto victim = std::find_if(clients_.begin(), clients_.end(),
                                 [](const Client& c) { return !c.responding; });
      if (victim == clients_.end()) {
        close(fd);
        continue;
      }
      close(victim->fd);
      clients_.erase(victim);
    }
    Client c;
    c.fd = fd;
    c.deadline = now + limits_.deadline;
    clients_.push_back(std::move(c));
  }
}

bool MetricsEndpoint::Read(Client& c, TimePoint now) {
  char buf[4096];
  for (;;) {
    const ssize_t n = recv(c.fd, buf, sizeof buf, 0);
    if (n == 0) return false;  // closed before its request was complete
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    c.in.append(buf, static_cast<size_t>(n));
    size_t end = c.in.find("\r\n\r\n");
    if (end == std::string::npos) end = c.in.find("\n\n");
    if (end == std::string::npos && c.in.size() <= limits_.max_request_bytes) continue;
    if (end == std::string::npos) {
      c.out = Response("431 Request Header Fields Too Large", "request too large\n", false);
    } else {
      c.out = Respond(c.in.substr(0, end), [this, now] { return CurrentBody(now); });
    }
    c.in.clear();
    c.in.shrink_to_fit();
    c.responding = true;
    return Write(c);
  }
}

bool MetricsEndpoint::Write(Client& c) {
  while (c.sent < c.out.size()) {
    const ssize_t n = send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    c.sent += static_cast<size_t>(n);
  }
  shutdown(c.fd, SHUT_WR);
  // What the client sent past its request head (a body) is read away: a close with unread
  // input resets the connection, and the client could lose the response.
  // Bounded: a client that keeps sending must not keep the loop here.
  char discard[4096];
  for (int i = 0; i < 16 && recv(c.fd, discard, sizeof discard, 0) > 0; ++i) {
  }
  return false;  // all sent: closed by the caller
}

std::optional<TimePoint> MetricsEndpoint::Expire(TimePoint now) {
  std::optional<TimePoint> next;
  for (auto it = clients_.begin(); it != clients_.end();) {
    if (it->deadline <= now) {
      close(it->fd);
      it = clients_.erase(it);
      continue;
    }
    next = next ? std::min(*next, it->deadline) : it->deadline;
    ++it;
  }
  return next;
}

std::string MetricsEndpoint::CurrentBody(TimePoint now) {
  if (!cached_at_ || now - *cached_at_ >= limits_.refresh || now < *cached_at_) {
    cached_ = body_();
    cached_at_ = now;
  }
  return cached_;
}

std::string MetricsEndpoint::Respond(const std::string& head, const Body& body) {
  // Request line: METHOD SP TARGET SP HTTP/x.y; the headers after it are not needed.
  const std::string line = head.substr(0, head.find_first_of("\r\n"));
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string::npos || line.compare(sp2 + 1, 5, "HTTP/") != 0) {
    return Response("400 Bad Request", "bad request\n", false);
  }
  const std::string method = line.substr(0, sp1);
  std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  target = target.substr(0, target.find('?'));
  const bool head_only = method == "HEAD";
  if (method != "GET" && !head_only) {
    return Response("405 Method Not Allowed", "only GET and HEAD\n", head_only);
  }
  if (target != "/metrics" && target != "/") {
    return Response("404 Not Found", "gshare serves /metrics\n", head_only);
  }
  return Response("200 OK", body(), head_only, "text/plain; version=0.0.4; charset=utf-8");
}

}  // namespace gshare
