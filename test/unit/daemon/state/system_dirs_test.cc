// Issue 21: the system daemon's per-user job directories.
#include "daemon/state/system_dirs.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "temp_dir.h"

namespace gshare::unit_system_dirs {
namespace {

struct stat Lstat(const std::string& path) {
  struct stat st {};
  REQUIRE(lstat(path.c_str(), &st) == 0);
  return st;
}

TEST_CASE("a user's job directory: root's above, the user's below") {
  if (getuid() != 0) return;  // chown needs root
  TempDir dir;
  REQUIRE(PrepareUserJobDir(dir.path(), 4321, 4322).ok());
  const std::string mine = UserJobDir(dir.path(), 4321);
  CHECK(mine == dir.path() + "/users/4321");
  for (const std::string& p : {dir.path() + "/users", mine}) {
    struct stat st = Lstat(p);
    CHECK(st.st_uid == 0);
    CHECK((st.st_mode & 07777) == 0711);
  }
  for (const char* sub : {"/jobs", "/logs", "/scripts"}) {
    struct stat st = Lstat(mine + sub);
    CHECK(st.st_uid == 4321u);
    CHECK(st.st_gid == 4322u);
    CHECK((st.st_mode & 07777) == 0700);
  }
  // Made again: a mode loosened meanwhile is tightened, the rest stays.
  REQUIRE(chmod((mine + "/logs").c_str(), 0777) == 0);
  REQUIRE(PrepareUserJobDir(dir.path(), 4321, 4322).ok());
  CHECK((Lstat(mine + "/logs").st_mode & 07777) == 0700);
  // A link where a directory should be is refused, not followed.
  std::filesystem::remove_all(mine + "/jobs");
  std::filesystem::create_directory_symlink("/etc", mine + "/jobs");
  CHECK_FALSE(PrepareUserJobDir(dir.path(), 4321, 4322).ok());
  CHECK(Lstat("/etc").st_uid == 0);
}

TEST_CASE("the system state directory is passable, not readable") {
  TempDir dir;
  const std::string state = dir.path() + "/state";
  REQUIRE(PrepareSystemStateDir(state).ok());
  CHECK((Lstat(state).st_mode & 07777) == 0711);
}

}  // namespace
}  // namespace gshare::unit_system_dirs
