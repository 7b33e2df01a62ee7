// MetricsPublisher: the textfile is written whole when due, at its interval, and a failure
// is kept (and logged) without stopping later writes.
#include "daemon/observe/metrics_publisher.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace gshare::unit_metrics_publisher {
namespace {

const TimePoint kT0 = TimePoint{} + std::chrono::hours(1);

std::string Read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/gshare-metrics-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf " + path).c_str()); }
};

TEST_CASE("metrics publisher: the textfile is replaced at its interval, mode 0644") {
  TempDir dir;
  Config::Metrics m;
  m.textfile = dir.path + "/gshare.prom";
  m.textfile_interval = Millis(15000);
  int made = 0;
  MetricsPublisher p(m, [&made] { return "gshare_up " + std::to_string(++made) + "\n"; });
  CHECK_FALSE(p.next_file().has_value());
  p.Start(kT0);
  CHECK(p.endpoint() == nullptr);  // no listen address
  REQUIRE(p.next_file() == kT0);
  p.FileTick(kT0);
  CHECK(Read(m.textfile) == "gshare_up 1\n");
  CHECK(p.next_file() == kT0 + Millis(15000));
  p.FileTick(kT0 + Millis(14999));  // not due: nothing made
  CHECK(made == 1);
  p.FileTick(kT0 + Millis(15000));
  CHECK(Read(m.textfile) == "gshare_up 2\n");
  struct stat st;
  REQUIRE(stat(m.textfile.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0644);
  CHECK(access((dir.path + "/.gshare.prom.tmp").c_str(), F_OK) != 0);  // renamed away
}

TEST_CASE("metrics publisher: a file that cannot be written keeps its error and is tried again") {
  TempDir dir;
  Config::Metrics m;
  m.textfile = dir.path + "/missing/gshare.prom";
  m.textfile_interval = Millis(1000);
  MetricsPublisher p(m, [] { return std::string("x 1\n"); });
  p.Start(kT0);
  p.FileTick(kT0);
  CHECK(p.file_error().find("cannot write") != std::string::npos);
  CHECK(p.next_file() == kT0 + Millis(1000));
  REQUIRE(mkdir((dir.path + "/missing").c_str(), 0755) == 0);
  p.FileTick(kT0 + Millis(1000));
  CHECK(p.file_error().empty());
  CHECK(Read(m.textfile) == "x 1\n");
}

TEST_CASE("metrics publisher: without a file nothing is ever due") {
  MetricsPublisher p(Config::Metrics{}, [] { return std::string(); });
  p.Start(kT0);
  p.FileTick(kT0);
  CHECK_FALSE(p.next_file().has_value());
  CHECK(p.endpoint() == nullptr);
}

}  // namespace
}  // namespace gshare::unit_metrics_publisher
