// DaemonSocket: the shim's connection to its daemon, against a listening socket of the test's
// own in a private directory, as the daemon's is.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "lease/daemon_socket.h"

namespace gshare::shim::unit_daemon_socket {
namespace {

using lease::DaemonSocket;
namespace proto = gshare::proto;

// A listening socket at <dir>/gshare.sock; the directory has mode `mode`.
struct Listener {
  char dir[64] = "/tmp/gshare-socket-test-XXXXXX";
  char path[sizeof(sockaddr_un::sun_path)] = {};
  int fd = -1;

  explicit Listener(mode_t mode = 0700) {
    REQUIRE(mkdtemp(dir) != nullptr);
    REQUIRE(chmod(dir, mode) == 0);
    std::snprintf(path, sizeof path, "%s/gshare.sock", dir);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path, std::strlen(path) + 1);
    REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(listen(fd, 4) == 0);
  }
  ~Listener() {
    close(fd);
    unlink(path);
    rmdir(dir);
  }
  int Accept() const { return accept4(fd, nullptr, nullptr, SOCK_CLOEXEC); }
};

const Listener* g_listener = nullptr;  // whose socket the choice below finds

int ChooseListener(char* path, size_t cap) {
  std::snprintf(path, cap, "%s", g_listener->path);
  return lease::ConnectTo(path);
}

int ChooseNone(char* path, size_t cap) {
  std::snprintf(path, cap, "/nonexistent/gshare.sock");
  return -1;
}

// Reads one frame's header and its payload of `len` bytes from the daemon's end.
proto::MsgType ReadFrame(int peer, void* payload, size_t len) {
  proto::FrameHeader h{};
  REQUIRE(lease::ReadAll(peer, &h, sizeof h));
  REQUIRE(h.length == len);
  REQUIRE(lease::ReadAll(peer, payload, len));
  return static_cast<proto::MsgType>(h.type);
}

void CheckHello(int peer, uint64_t job, const uint8_t token[16]) {
  proto::HelloMsg hello{};
  CHECK(ReadFrame(peer, &hello, sizeof hello) == proto::MsgType::kHello);
  CHECK(hello.job_id == job);
  CHECK(hello.pid == getpid());
  CHECK(std::memcmp(hello.token, token, 16) == 0);
}

bool IsOpen(int fd) { return fcntl(fd, F_GETFD) != -1; }

TEST_CASE("DaemonSocket: opens once with the job's hello, dials the same daemon again") {
  Listener l;
  g_listener = &l;
  DaemonSocket s(ChooseListener, lease::ConnectTo);
  uint8_t token[16];
  for (int i = 0; i < 16; ++i) token[i] = static_cast<uint8_t>(i + 1);
  MutexLock lock(lease::g_mu);
  CHECK_FALSE(s.Opened());
  REQUIRE(s.Open(42, token));
  CHECK(s.Opened());
  CHECK_FALSE(s.Open(7, token));  // once per process
  CHECK(std::strcmp(s.path(), l.path) == 0);
  CHECK(s.job_id() == 42);
  const int first = s.fd();
  CHECK(first >= 0);
  const int peer = l.Accept();
  REQUIRE(peer >= 0);
  CheckHello(peer, 42, token);

  // A reconnection reaches the daemon chosen at Open, with the same proof; a ping there is
  // answered before the lease thread adopts it.
  const int again = s.Dial();
  REQUIRE(again >= 0);
  const int peer2 = l.Accept();
  CheckHello(peer2, 42, token);
  proto::PingMsg pong{9};
  proto::FrameHeader h = proto::MakeHeader(proto::MsgType::kPong, sizeof pong);
  REQUIRE(write(peer2, &h, sizeof h) == sizeof h);
  REQUIRE(write(peer2, &pong, sizeof pong) == sizeof pong);
  CHECK(s.AwaitPong(again, 9, 1000));
  proto::PingMsg ping{};
  CHECK(ReadFrame(peer2, &ping, sizeof ping) == proto::MsgType::kPing);
  CHECK(ping.seq == 9);
  CHECK_FALSE(s.AwaitPong(again, 10, 50));  // no answer within 50 ms
  CHECK(ReadFrame(peer2, &ping, sizeof ping) == proto::MsgType::kPing);
  s.Adopt(again);
  CHECK(s.fd() == again);
  close(first);
  close(peer);

  // Given up: shut down at once (the daemon reads its end, a send fails), but open until the
  // lease thread closes it, so that its number is not reused under a poll.
  s.Disconnect();
  CHECK(s.fd() == -1);
  CHECK(s.FdUnlocked() == -1);
  char c;
  CHECK(recv(peer2, &c, 1, 0) == 0);
  CHECK_FALSE(s.Ping(again, 1));
  CHECK(IsOpen(again));
  s.CloseDead();
  CHECK_FALSE(IsOpen(again));
  close(peer2);
}

TEST_CASE("DaemonSocket: with no daemon it stays unconnected; frames need a connection") {
  DaemonSocket s(ChooseNone, lease::ConnectTo);
  const uint8_t token[16] = {};
  MutexLock lock(lease::g_mu);
  CHECK_FALSE(s.Open(0, token));
  CHECK(s.Opened());  // not tried again
  CHECK(s.fd() == -1);
  CHECK(std::strcmp(s.path(), "/nonexistent/gshare.sock") == 0);
  CHECK(s.Dial() == -1);
  CHECK_FALSE(s.Ping(-1, 1));
  int pair[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0);
  char big[sizeof(proto::MemReportMsg) + 1] = {};
  CHECK_FALSE(s.SendFrame(pair[0], proto::MsgType::kMemReport, big, sizeof big));
  CHECK(s.SendFrame(pair[0], proto::MsgType::kMemReport, big, sizeof big - 1));
  close(pair[0]);
  close(pair[1]);
}

TEST_CASE("DaemonSocket: a forked child forgets the parent's connection") {
  Listener l;
  g_listener = &l;
  DaemonSocket s(ChooseListener, lease::ConnectTo);
  const uint8_t token[16] = {};
  int fd;
  {
    MutexLock lock(lease::g_mu);
    REQUIRE(s.Open(5, token));
    fd = s.fd();
  }
  s.ResetAfterFork();
  MutexLock lock(lease::g_mu);
  CHECK_FALSE(s.Opened());
  CHECK(s.fd() == -1);
  CHECK_FALSE(IsOpen(fd));
}

TEST_CASE("ConnectTo: a socket in a directory others may write is refused") {
  Listener open_dir(0777);
  CHECK(lease::ConnectTo(open_dir.path) == -1);
  Listener own(0700);
  const int fd = lease::ConnectTo(own.path);
  CHECK(fd >= 0);
  close(fd);
}

}  // namespace
}  // namespace gshare::shim::unit_daemon_socket
