// Tests for daemon_dirs.h (issue 27): the daemon's socket directory and state directory are
// made private, and one someone else made first is refused.
#include "daemon/state/daemon_dirs.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include "temp_dir.h"

namespace gshare::unit_daemon_dirs {
namespace {

constexpr uid_t kSomeoneElse = 65534;  // nobody

mode_t ModeOf(const std::string& path) {
  struct stat st;
  REQUIRE(lstat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// XDG_RUNTIME_DIR set to `dir` for the test's scope (the standard runtime dir is dir/gshare).
class RuntimeDirEnv {
 public:
  explicit RuntimeDirEnv(const std::string& dir) {
    if (const char* v = getenv("XDG_RUNTIME_DIR")) old_ = v;
    setenv("XDG_RUNTIME_DIR", dir.c_str(), 1);
  }
  ~RuntimeDirEnv() {
    if (old_.empty()) {
      unsetenv("XDG_RUNTIME_DIR");
    } else {
      setenv("XDG_RUNTIME_DIR", old_.c_str(), 1);
    }
  }

 private:
  std::string old_;
};

TEST_CASE("the standard runtime directory is made 0700, or refused when not ours") {
  TempDir dir;
  RuntimeDirEnv env(dir.path());
  const std::string rundir = dir.File("gshare");
  CHECK(PrepareSocketDir(rundir + "/gshare.sock").ok());
  CHECK(ModeOf(rundir) == 0700);
  REQUIRE(chmod(rundir.c_str(), 0777) == 0);
  CHECK(PrepareSocketDir(rundir + "/gshare.sock").ok());
  CHECK(ModeOf(rundir) == 0700);
  if (getuid() == 0) {  // only root can give it away
    REQUIRE(chown(rundir.c_str(), kSomeoneElse, kSomeoneElse) == 0);
    REQUIRE(chmod(rundir.c_str(), 0777) == 0);
    Status s = PrepareSocketDir(rundir + "/gshare.sock");
    CHECK(!s.ok());
    CHECK(s.message().find("belongs to uid 65534") != std::string::npos);
  }
  REQUIRE(rmdir(rundir.c_str()) == 0);
  REQUIRE(symlink(dir.path().c_str(), rundir.c_str()) == 0);
  CHECK(!PrepareSocketDir(rundir + "/gshare.sock").ok());
}

TEST_CASE("a socket directory that is not the standard one is never created") {
  TempDir dir;
  RuntimeDirEnv env(dir.File("elsewhere"));
  Status s = PrepareSocketDir(dir.File("missing/gshare.sock"));
  CHECK(!s.ok());
  CHECK(s.message().find("does not exist") != std::string::npos);
  CHECK(access(dir.File("missing").c_str(), F_OK) != 0);
  REQUIRE(mkdir(dir.File("open").c_str(), 0777) == 0);
  REQUIRE(chmod(dir.File("open").c_str(), 0777) == 0);
  CHECK(!PrepareSocketDir(dir.File("open/gshare.sock")).ok());
  CHECK(ModeOf(dir.File("open")) == 0777);  // not ours to change
  REQUIRE(chmod(dir.File("open").c_str(), 0755) == 0);
  CHECK(PrepareSocketDir(dir.File("open/gshare.sock")).ok());
}

TEST_CASE("the state directory and the database files are made private") {
  TempDir dir;
  const std::string state = dir.File("a/b/state");
  CHECK(!PrepareStateDir("relative/state").ok());
  const mode_t old = umask(077);
  CHECK(PrepareStateDir(state).ok());
  umask(old);
  CHECK(ModeOf(state) == 0700);
  REQUIRE(chmod(state.c_str(), 0755) == 0);
  CHECK(PrepareStateDir(state).ok());
  CHECK(ModeOf(state) == 0700);
  REQUIRE(chmod(state.c_str(), 0555) == 0);  // read-only stays read-only
  CHECK(PrepareStateDir(state).ok());
  CHECK(ModeOf(state) == 0500);
  REQUIRE(chmod(state.c_str(), 0700) == 0);
  dir.Write("a/b/state/gshare.db", "");
  dir.Write("a/b/state/gshare.db-wal", "");
  REQUIRE(chmod(dir.File("a/b/state/gshare.db").c_str(), 0644) == 0);
  REQUIRE(chmod(dir.File("a/b/state/gshare.db-wal").c_str(), 0666) == 0);
  CHECK(PrivateDatabaseFiles(state + "/gshare.db").ok());
  CHECK(ModeOf(state + "/gshare.db") == 0600);
  CHECK(ModeOf(state + "/gshare.db-wal") == 0600);
  if (getuid() == 0) {
    REQUIRE(chown(state.c_str(), kSomeoneElse, kSomeoneElse) == 0);
    Status s = PrepareStateDir(state);
    CHECK(!s.ok());
    CHECK(s.message().find("belongs to uid 65534") != std::string::npos);
  }
}

}  // namespace
}  // namespace gshare::unit_daemon_dirs
