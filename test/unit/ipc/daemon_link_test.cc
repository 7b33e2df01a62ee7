// DaemonLink: requests with deadlines over one connection, against a daemon played by the test
// on the other end of a socketpair.
#include "ipc/daemon_link.h"

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include <doctest/doctest.h>

#include "ipc/job_json.h"

namespace gshare::unit_daemon_link {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// The daemon's end: reads a request's frame, sends replies.
struct FakeDaemon {
  int fd = -1;
  ~FakeDaemon() {
    if (fd >= 0) close(fd);
  }
  Frame Read() {
    Result<Frame> f = ReadFrame(fd, proto::kMaxRequestPayload, DeadlineIn(2s));
    REQUIRE(f.ok());
    return f.value();
  }
  void Reply(const nlohmann::json& j) {
    REQUIRE(WriteAll(fd, EncodeFrame(proto::MsgType::kReply, ToJsonText(j))).ok());
  }
};

// A link to a fake daemon, with a 200 ms timeout.
std::unique_ptr<DaemonLink> Connect(FakeDaemon* daemon) {
  int fds[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
  daemon->fd = fds[1];
  return std::make_unique<DaemonLink>(fds[0], 200ms);
}

TEST_CASE("hostile users: a request the daemon does not answer fails in its time, not never") {
  FakeDaemon daemon;
  std::unique_ptr<DaemonLink> link = Connect(&daemon);
  const auto start = Clock::now();
  Result<nlohmann::json> reply = link->Request(proto::MsgType::kRunEnded, {{"job_id", 1}});
  const auto took = Clock::now() - start;
  REQUIRE_FALSE(reply.ok());
  CHECK(IsDaemonTimeout(reply.status()));
  CHECK_FALSE(IsLostConnection(reply.status()));
  CHECK(reply.status().message() == "the daemon did not answer within 200ms (hung or stopped?)");
  CHECK(took >= 200ms);
  CHECK(took < 2s);
  CHECK(link->owed() == 1);
  // The daemon answers late, then answers the next request: the late reply is dropped.
  CHECK(daemon.Read().type == proto::MsgType::kRunEnded);
  daemon.Reply({{"ok", true}, {"which", "late"}});
  daemon.Reply({{"ok", true}, {"which", "next"}});
  reply = link->Request(proto::MsgType::kStatusRequest, nlohmann::json::object());
  REQUIRE(reply.ok());
  CHECK(reply->at("which") == "next");
  CHECK(link->owed() == 0);
}

TEST_CASE("hostile users: posted requests' replies are read before the next one's") {
  FakeDaemon daemon;
  std::unique_ptr<DaemonLink> link = Connect(&daemon);
  REQUIRE(link->Post(proto::MsgType::kRunStarted, {{"job_id", 1}, {"pid", 2}}).ok());
  CHECK(link->owed() == 1);
  CHECK_FALSE(link->Readable());
  daemon.Reply({{"ok", true}, {"which", "started"}});
  CHECK(link->Readable());
  daemon.Reply({{"ok", false}, {"error", "job 1 is not running"}});
  Result<nlohmann::json> reply = link->Request(proto::MsgType::kRunEnded, {{"job_id", 1}});
  REQUIRE_FALSE(reply.ok());
  CHECK(reply.status().message() == "job 1 is not running");  // the daemon's own refusal
  CHECK_FALSE(IsDaemonTimeout(reply.status()));
  CHECK(link->owed() == 0);
  CHECK_FALSE(link->Await(DeadlineIn(10ms)).ok());  // nothing owed
}

TEST_CASE("hostile users: a daemon that went away is a lost connection") {
  FakeDaemon daemon;
  std::unique_ptr<DaemonLink> link = Connect(&daemon);
  close(daemon.fd);
  daemon.fd = -1;
  Result<nlohmann::json> reply = link->Request(proto::MsgType::kRunEnded, {{"job_id", 1}});
  REQUIRE_FALSE(reply.ok());
  CHECK(IsLostConnection(reply.status()));
}

TEST_CASE("hostile users: GSHARE_DAEMON_TIMEOUT_MS sets a client's patience, within bounds") {
  const char* old = std::getenv("GSHARE_DAEMON_TIMEOUT_MS");
  const std::string saved = old != nullptr ? old : "";
  unsetenv("GSHARE_DAEMON_TIMEOUT_MS");
  CHECK(ReplyTimeout() == 10s);
  setenv("GSHARE_DAEMON_TIMEOUT_MS", "1500", 1);
  CHECK(ReplyTimeout() == 1500ms);
  for (const char* bad : {"0", "99", "3600001", "5s", ""}) {
    setenv("GSHARE_DAEMON_TIMEOUT_MS", bad, 1);
    CHECK(ReplyTimeout() == 10s);
  }
  if (old != nullptr) {
    setenv("GSHARE_DAEMON_TIMEOUT_MS", saved.c_str(), 1);
  } else {
    unsetenv("GSHARE_DAEMON_TIMEOUT_MS");
  }
}

}  // namespace
}  // namespace gshare::unit_daemon_link
