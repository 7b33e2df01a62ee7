#include "daemon/jobs/log_rotation.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "temp_dir.h"

namespace gshare::unit_log_rotation {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteAll(int fd, const std::string& text) {
  REQUIRE(write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
}

}  // namespace

TEST_CASE("RotateLogIfLarger moves a log past its size aside and writes on in a new file") {
  TempDir dir;
  const std::string log = dir.path() + "/daemon.log";
  int fd = open(log.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  REQUIRE(fd >= 0);
  WriteAll(fd, "0123456789");

  Result<bool> r = RotateLogIfLarger(fd, log, 10);  // not past the size yet
  REQUIRE(r.ok());
  CHECK_FALSE(r.value());
  r = RotateLogIfLarger(fd, log, 0);  // 0: never rotate
  REQUIRE(r.ok());
  CHECK_FALSE(r.value());

  WriteAll(fd, "x");
  r = RotateLogIfLarger(fd, log, 10);
  REQUIRE(r.ok());
  CHECK(r.value());
  WriteAll(fd, "after");
  CHECK(ReadAll(log + ".1") == "0123456789x");
  CHECK(ReadAll(log) == "after");

  // A descriptor that is not the named file (stderr sent elsewhere) is left alone.
  const std::string other = dir.path() + "/other.log";
  int other_fd = open(other.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  REQUIRE(other_fd >= 0);
  WriteAll(other_fd, std::string(100, 'y'));
  r = RotateLogIfLarger(other_fd, log, 10);
  REQUIRE(r.ok());
  CHECK_FALSE(r.value());
  close(other_fd);
  close(fd);
}

}  // namespace gshare::unit_log_rotation
