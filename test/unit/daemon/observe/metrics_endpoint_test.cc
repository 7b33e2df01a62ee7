// Issue 24 (metrics): the daemon's HTTP endpoint answers scrapers, and clients that are slow,
// silent, partial, garbage or too many cost it nothing but their own connection.
#include "daemon/observe/metrics_endpoint.h"

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

namespace gshare::unit_metrics_endpoint {
namespace {

const TimePoint kT0 = TimePoint{} + std::chrono::hours(1);

struct Endpoint {
  int bodies = 0;
  MetricsEndpoint endpoint;
  explicit Endpoint(MetricsEndpoint::Limits limits)
      : endpoint([this] { return "gshare_up " + std::to_string(++bodies) + "\n"; }, limits) {
    Result<ListenAddress> addr = ParseListenAddress("127.0.0.1:1", false);
    REQUIRE(addr.ok());
    reinterpret_cast<sockaddr_in*>(&addr.value().addr)->sin_port = 0;  // the kernel's choice
    REQUIRE(endpoint.Listen(addr.value(), "127.0.0.1:0").ok());
  }
  int Connect() const {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    timeval two_seconds{2, 0};  // a test that fails must not hang in ReadAll
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &two_seconds, sizeof two_seconds);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(endpoint.port()));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    return fd;
  }
  // One poll round at `now`, waiting at most 50 ms for something to happen.
  void Round(TimePoint now) {
    endpoint.Expire(now);
    std::vector<pollfd> fds;
    endpoint.PollSet(&fds);
    poll(fds.data(), fds.size(), 50);
    endpoint.OnPoll(fds, 0, now);
  }
};

// Everything the server sends until it closes (the test's socket blocks; the server's not).
std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

void SendText(int fd, const std::string& s) {
  REQUIRE(write(fd, s.data(), s.size()) == ssize_t(s.size()));
}

}  // namespace

TEST_CASE("requests and their responses") {
  const MetricsEndpoint::Body body = [] { return std::string("m 1\n"); };
  const std::string ok = MetricsEndpoint::Respond("GET /metrics HTTP/1.1\r\nHost: x", body);
  CHECK(ok.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(ok.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n") != std::string::npos);
  CHECK(ok.find("Content-Length: 4\r\n") != std::string::npos);
  CHECK(ok.substr(ok.size() - 4) == "m 1\n");
  CHECK(MetricsEndpoint::Respond("GET /?x=1 HTTP/1.0", body).rfind("HTTP/1.1 200", 0) == 0);
  const std::string head = MetricsEndpoint::Respond("HEAD /metrics HTTP/1.1", body);
  CHECK(head.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(head.substr(head.size() - 4) == "\r\n\r\n");
  CHECK(MetricsEndpoint::Respond("GET /etc/passwd HTTP/1.1", body).rfind("HTTP/1.1 404", 0) == 0);
  CHECK(MetricsEndpoint::Respond("POST /metrics HTTP/1.1", body).rfind("HTTP/1.1 405", 0) == 0);
  CHECK(MetricsEndpoint::Respond("\x16\x03\x01 garbage", body).rfind("HTTP/1.1 400", 0) == 0);
  CHECK(MetricsEndpoint::Respond("", body).rfind("HTTP/1.1 400", 0) == 0);
}

TEST_CASE("silent and partial clients do not hold up a scraper") {
  MetricsEndpoint::Limits limits;
  limits.max_clients = 3;
  limits.deadline = Millis(5000);
  Endpoint e(limits);
  // Three clients take every slot and never finish their requests.
  std::vector<int> idle = {e.Connect(), e.Connect(), e.Connect()};
  SendText(idle[0], "GET /metr");
  e.Round(kT0);
  e.Round(kT0);
  CHECK(e.endpoint.clients() == 3);
  // A scraper still gets its answer: the oldest unfinished client makes room.
  const int scraper = e.Connect();
  SendText(scraper, "GET /metrics HTTP/1.1\r\n\r\n");
  for (int i = 0; i < 4 && e.endpoint.clients() != 2; ++i) e.Round(kT0 + Millis(10));
  CHECK(ReadAll(scraper).find("gshare_up 1\n") != std::string::npos);
  CHECK(ReadAll(idle[0]) == "");  // closed for the scraper
  CHECK(e.endpoint.clients() == 2);
  // Past the deadline the others are closed too.
  CHECK(e.endpoint.Expire(kT0 + Millis(100)).has_value());
  e.Round(kT0 + Millis(5001));
  CHECK(e.endpoint.clients() == 0);
  CHECK(ReadAll(idle[1]) == "");
  for (int fd : idle) close(fd);
  close(scraper);
}

TEST_CASE("an oversized or garbage request ends that client only") {
  Endpoint e(MetricsEndpoint::Limits{});
  const int big = e.Connect();
  SendText(big, "GET /metrics HTTP/1.1\r\nX: " + std::string(9000, 'a'));
  const int garbage = e.Connect();
  SendText(garbage, std::string("\0\x01\x02\n\n", 5));
  for (int i = 0; i < 6; ++i) e.Round(kT0);
  CHECK(ReadAll(big).rfind("HTTP/1.1 431", 0) == 0);
  CHECK(ReadAll(garbage).rfind("HTTP/1.1 400", 0) == 0);
  CHECK(e.endpoint.clients() == 0);
  CHECK(e.bodies == 0);
  close(big);
  close(garbage);
}

TEST_CASE("scrapes within the refresh period share one body") {
  MetricsEndpoint::Limits limits;
  limits.refresh = Millis(500);
  Endpoint e(limits);
  std::vector<std::string> got;
  for (int ms : {0, 100, 600}) {
    const int fd = e.Connect();
    SendText(fd, "GET /metrics HTTP/1.0\r\n\r\n");
    for (int i = 0; i < 3; ++i) e.Round(kT0 + Millis(ms));
    got.push_back(ReadAll(fd));
    close(fd);
  }
  CHECK(got[0].find("gshare_up 1\n") != std::string::npos);
  CHECK(got[1].find("gshare_up 1\n") != std::string::npos);
  CHECK(got[2].find("gshare_up 2\n") != std::string::npos);
}

}  // namespace gshare::unit_metrics_endpoint
