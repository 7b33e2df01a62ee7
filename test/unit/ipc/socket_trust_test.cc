// Tests for socket_trust.h (issue 27): which owners and modes of the socket's directory, the
// socket and the listener a client trusts, and the checks on real paths.
#include "ipc/socket_trust.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include <doctest/doctest.h>

#include "ipc/daemon_launcher.h"
#include "temp_dir.h"

namespace gshare::unit_socket_trust {
namespace {

struct stat Stat(mode_t type_and_mode, uid_t owner) {
  struct stat st = {};
  st.st_mode = type_and_mode;
  st.st_uid = owner;
  return st;
}

constexpr uid_t kMe = 1000;
constexpr uid_t kOther = 1001;

TEST_CASE(
    "issue27: the socket's directory is trusted only when its owner is the user or root "
    "and nobody else may write to it") {
  CHECK(UntrustedDirReason(Stat(S_IFDIR | 0700, kMe), kMe).empty());
  CHECK(UntrustedDirReason(Stat(S_IFDIR | 0755, 0), kMe).empty());  // a system daemon's
  CHECK(UntrustedDirReason(Stat(S_IFDIR | 0777, kOther), kMe).find("uid 1001") !=
        std::string::npos);
  CHECK(UntrustedDirReason(Stat(S_IFDIR | 0700, kOther), kMe).find("uid 1001") !=
        std::string::npos);
  CHECK(UntrustedDirReason(Stat(S_IFDIR | 0777, kMe), kMe).find("0777") != std::string::npos);
  CHECK(UntrustedDirReason(Stat(S_IFDIR | 0720, kMe), kMe).find("writable") != std::string::npos);
  CHECK(UntrustedDirReason(Stat(S_IFDIR | 01777, 0), kMe).find("writable") != std::string::npos);
  CHECK(UntrustedDirReason(Stat(S_IFLNK | 0777, kMe), kMe).find("symbolic link") !=
        std::string::npos);
  CHECK(!UntrustedDirReason(Stat(S_IFREG | 0700, kMe), kMe).empty());
}

TEST_CASE("the socket and the listener are trusted when they are the user's or root's") {
  CHECK(UntrustedSocketReason(Stat(S_IFSOCK | 0600, kMe), kMe).empty());
  CHECK(UntrustedSocketReason(Stat(S_IFSOCK | 0666, 0), kMe).empty());
  CHECK(UntrustedSocketReason(Stat(S_IFSOCK | 0600, kOther), kMe).find("uid 1001") !=
        std::string::npos);
  CHECK(!UntrustedSocketReason(Stat(S_IFREG | 0600, kMe), kMe).empty());
  CHECK(UntrustedPeerReason(kMe, kMe).empty());
  CHECK(UntrustedPeerReason(0, kMe).empty());
  CHECK(UntrustedPeerReason(kOther, kMe).find("runs as uid 1001") != std::string::npos);
  CHECK(UntrustedPeerReason(kOther, 0).find("not as root") != std::string::npos);
}

int Listen(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(listen(fd, 4) == 0);
  return fd;
}

TEST_CASE(
    "issue27: ConnectUnix refuses a socket in a directory others may write, before connecting") {
  TempDir dir;
  const std::string sock = dir.File("gshare.sock");
  const int listener = Listen(sock);
  REQUIRE(chmod(dir.path().c_str(), 0700) == 0);
  Result<int> fd = ConnectUnix(sock);
  REQUIRE(fd.ok());
  close(fd.value());

  REQUIRE(chmod(dir.path().c_str(), 0777) == 0);
  Result<int> refused = ConnectUnix(sock);
  CHECK(!refused.ok());
  CHECK(refused.status().message() == "refusing to use " + sock +
                                          ": its directory is writable by others (mode 0777) (" +
                                          dir.path() + ")");
  CHECK(!CheckSocketPath(sock).ok());
  close(listener);
}

TEST_CASE("a symbolic link as the socket's directory is not followed") {
  TempDir dir;
  REQUIRE(mkdir(dir.File("real").c_str(), 0700) == 0);
  const int listener = Listen(dir.File("real/gshare.sock"));
  REQUIRE(symlink(dir.File("real").c_str(), dir.File("link").c_str()) == 0);
  Result<int> fd = ConnectUnix(dir.File("link/gshare.sock"));
  CHECK(!fd.ok());
  CHECK(fd.status().message().find("symbolic link") != std::string::npos);
  close(listener);
}

TEST_CASE("a missing directory or socket is no reason to refuse (nothing listens)") {
  CHECK(CheckSocketPath("/nonexistent/dir/gshare.sock").ok());
  TempDir dir;
  REQUIRE(chmod(dir.path().c_str(), 0700) == 0);
  CHECK(CheckSocketPath(dir.File("gshare.sock")).ok());
  dir.Write("gshare.sock", "not a socket");
  CHECK(!CheckSocketPath(dir.File("gshare.sock")).ok());
}

}  // namespace
}  // namespace gshare::unit_socket_trust
