// Issue 24: a daemon tells that a config file it read at start changed since.
#include "base/config_stamp.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace gshare::unit_config_stamp {
namespace {

std::string TempDir() {
  char dir[] = "/tmp/gshare-config-stamp-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  return dir;
}

void Write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

TEST_CASE("ConfigStamp sees new content, creation and removal, not a touch") {
  const std::string dir = TempDir();
  const std::string path = dir + "/gshare.toml";
  Write(path, "[scheduler]\nquantum = \"20s\"\n");
  ConfigStamp stamp = ConfigStamp::Take(path);
  CHECK(stamp.present());
  CHECK(stamp.path() == path);
  CHECK_FALSE(stamp.Changed());

  // The same bytes written again (a new time): unchanged.
  Write(path, "[scheduler]\nquantum = \"20s\"\n");
  struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 0}};
  REQUIRE(utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
  CHECK_FALSE(stamp.Changed());

  // Same size, other content.
  Write(path, "[scheduler]\nquantum = \"30s\"\n");
  CHECK(stamp.Changed());

  unlink(path.c_str());
  CHECK(stamp.Changed());

  // A file that was absent at start and exists now.
  ConfigStamp absent = ConfigStamp::Take(dir + "/none.toml");
  CHECK_FALSE(absent.present());
  CHECK_FALSE(absent.Changed());
  Write(dir + "/none.toml", "");
  CHECK(absent.Changed());
  unlink((dir + "/none.toml").c_str());
  rmdir(dir.c_str());
}

TEST_CASE("StampConfigFiles stamps each source in order, relative paths made absolute") {
  ConfigSources sources;
  sources.files = {{"/nonexistent/gshare.toml", false}, {"relative.toml", true}};
  std::vector<ConfigStamp> stamps = StampConfigFiles(sources);
  REQUIRE(stamps.size() == 2);
  CHECK(stamps[0].path() == "/nonexistent/gshare.toml");
  CHECK(stamps[1].path().front() == '/');
  CHECK(stamps[1].path().ends_with("/relative.toml"));
}

}  // namespace
}  // namespace gshare::unit_config_stamp
