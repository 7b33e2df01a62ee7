// Tests for daemon_record.h (issue 19): the live daemon's record is written 0600 and read back
// only when it is trustworthy and names a live process.
#include "ipc/daemon_record.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include "temp_dir.h"

namespace gshare::unit_daemon_record {
namespace {

TEST_CASE(
    "issue19: the daemon record round-trips, mode 0600, and is removed by its own daemon only") {
  TempDir dir;
  const std::string path = DaemonRecordPath(dir.path());
  CHECK(path == dir.path() + "/daemon.json");
  CHECK(!ReadDaemonRecord(path));
  REQUIRE(WriteDaemonRecord(path, {getpid(), "/run/user/1/gshare/gshare.sock"}).ok());
  struct stat st;
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  std::optional<DaemonRecord> r = ReadDaemonRecord(path);
  REQUIRE(r);
  CHECK(r->pid == getpid());
  CHECK(r->socket == "/run/user/1/gshare/gshare.sock");
  RemoveDaemonRecord(path, getpid() + 1);
  CHECK(ReadDaemonRecord(path));
  RemoveDaemonRecord(path, getpid());
  CHECK(!ReadDaemonRecord(path));
}

TEST_CASE("a record of a dead process, a bad one or one others may write is ignored") {
  TempDir dir;
  const std::string path = DaemonRecordPath(dir.path());
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  REQUIRE(dead > 0);
  int status;
  waitpid(dead, &status, 0);
  REQUIRE(WriteDaemonRecord(path, {dead, "/tmp/x.sock"}).ok());
  CHECK(!ReadDaemonRecord(path));

  dir.Write("daemon.json", "{\"pid\": \"1\", \"socket\": 3}");
  CHECK(!ReadDaemonRecord(path));
  dir.Write("daemon.json", "{\"pid\": 1, \"socket\": \"relative.sock\"}");
  CHECK(!ReadDaemonRecord(path));
  dir.Write("daemon.json", "{\"pid\": 1, \"socket\": \"/run/gshare/gshare.sock\"}");
  REQUIRE(chmod(path.c_str(), 0600) == 0);
  CHECK(ReadDaemonRecord(path));  // pid 1 lives
  REQUIRE(chmod(path.c_str(), 0622) == 0);
  CHECK(!ReadDaemonRecord(path));
  RemoveDaemonRecord(path, 2);  // not its daemon's pid: kept
  CHECK(access(path.c_str(), F_OK) == 0);
}

}  // namespace
}  // namespace gshare::unit_daemon_record
