// MetricsEndpoint: the daemon's opt-in HTTP endpoint for Prometheus ([metrics] listen;
// docs/design.md "Metrics"): a listening TCP socket and a few scrapers, each read and written
// without blocking, its whole exchange bounded in bytes and time, so that a slow, partial or
// garbage client costs the daemon one descriptor for a few seconds and never a wait. Knows
// no metric: the body comes from the owner's callback. Not thread-safe: the daemon's event
// loop is its only caller. Errors: Listen returns them; a client's end it by closing it.
#pragma once

#include <poll.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/listen_address.h"
#include "base/status.h"
#include "policy/types.h"

namespace gshare {

class MetricsEndpoint {
 public:
  struct Limits {
    size_t max_clients = 16;
    size_t max_request_bytes = 8192;  // request line and headers; a body is never read
    Millis deadline{5000};            // a client's whole exchange, from accept to last byte
    // A body is made at most once per this period; scrapers in between get the same one.
    Millis refresh{500};
  };
  // The exposition (text format 0.0.4), made when a scraper asks.
  using Body = std::function<std::string()>;

  explicit MetricsEndpoint(Body body) : MetricsEndpoint(std::move(body), Limits{}) {}
  MetricsEndpoint(Body body, Limits limits);
  ~MetricsEndpoint();  // closes every descriptor
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  // Binds `addr` and listens. Error (naming the address and errno) when it cannot.
  Status Listen(const ListenAddress& addr, const std::string& name);
  bool listening() const { return listen_fd_ >= 0; }
  // The port bound (after Listen; the one the kernel chose for port 0 in tests).
  int port() const;

  // Appends the listening socket and each client's descriptor, with the events it waits for.
  void PollSet(std::vector<pollfd>* fds) const;
  // Handles what poll() reported for the entries PollSet appended, from fds[first] on (in the
  // same order, the endpoint unchanged in between).
  void OnPoll(const std::vector<pollfd>& fds, size_t first, TimePoint now);
  // Closes the clients past their deadline; returns the earliest deadline still ahead.
  std::optional<TimePoint> Expire(TimePoint now);
  size_t clients() const { return clients_.size(); }

  // The response to request head `head` (up to the blank line): 200 with the body for
  // GET/HEAD of /metrics or /, else 400, 404 or 405; always "Connection: close".
  // `body` is called only for a 200.
  static std::string Respond(const std::string& head, const Body& body);

 private:
  struct Client {
    int fd = -1;
    std::string in;
    std::string out;  // the response, once the request is complete
    size_t sent = 0;
    bool responding = false;
    TimePoint deadline{};
  };
  void Accept(TimePoint now);
  // Reads what is there; true while the client stays open.
  bool Read(Client& c, TimePoint now);
  // Writes what the socket takes; true while the client stays open.
  bool Write(Client& c);
  std::string CurrentBody(TimePoint now);

  Body body_;
  Limits limits_;
  int listen_fd_ = -1;
  std::vector<Client> clients_;  // in the order accepted
  std::string cached_;
  std::optional<TimePoint> cached_at_;
};

}  // namespace gshare
