// Tests for DaemonLauncher and ConnectUnix against fake daemons: a python3 one that follows the
// lock/ready-fd contract, /bin/false, and a shell that never gets ready.
#include "ipc/daemon_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <doctest/doctest.h>

#include "temp_dir.h"

namespace gshare::unit_daemon_launcher {
namespace {

constexpr auto kPatience = std::chrono::seconds(5);
constexpr int kProbeFd = 200;  // opened without CLOEXEC by the test: the daemon must not have it

// Takes the lock, writes 'B' when another holds it; else records "pid sid probe-inherited stdin",
// dawdles so the racers really race, listens and writes 'R'.
constexpr const char* kFakeDaemon = R"(import fcntl, os, socket, sys, time
sock_path, lock_path, pid_path, probe_fd = sys.argv[1:5]
ready = int(sys.argv[sys.argv.index("--ready-fd") + 1])
inherited = int(os.path.exists("/proc/self/fd/" + probe_fd))
stdin = os.readlink("/proc/self/fd/0")
lock = open(lock_path, "a")
try:
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    print("lost the lock", flush=True)
    os.write(ready, b"B")
    sys.exit(0)
with open(pid_path, "a") as f:
    f.write("%d %d %d %s\n" % (os.getpid(), os.getsid(0), inherited, stdin))
print("fake daemon up", flush=True)
time.sleep(0.2)
if os.path.exists(sock_path):
    os.unlink(sock_path)
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(sock_path)
server.listen(64)
os.write(ready, b"R")
os.close(ready)
while True:
    server.accept()[0].close()
)";

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Kills pid once it has written pid_file (a shell of ours that outlives the test otherwise).
void KillFromPidFile(const std::string& pid_file) {
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (ReadFile(pid_file).empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const int pid = std::atoi(ReadFile(pid_file).c_str());
  if (pid > 0) kill(pid, SIGKILL);
}

TEST_CASE("daemon launcher starts exactly one daemon when eight race") {
  TempDir dir;
  const std::string script = dir.File("fake_daemon.py"), pids = dir.File("pids");
  std::ofstream(script) << kFakeDaemon;
  const int probe = open("/dev/null", O_RDONLY);
  REQUIRE(probe >= 0);
  REQUIRE(dup2(probe, kProbeFd) == kProbeFd);
  close(probe);

  LaunchSpec spec;
  spec.socket_path = dir.File("sock");
  spec.daemon_argv = {"python3",        script, spec.socket_path,
                      dir.File("lock"), pids,   std::to_string(kProbeFd)};
  spec.log_path = dir.File("log/sub/daemon.log");
  constexpr int kRacers = 8;
  std::vector<Status> results(kRacers);
  std::vector<std::thread> racers;
  for (int i = 0; i < kRacers; ++i) {
    racers.emplace_back([&, i] { results[i] = DaemonLauncher::EnsureDaemon(spec); });
  }
  for (auto& racer : racers) racer.join();
  close(kProbeFd);

  std::istringstream lines(ReadFile(pids));
  long pid = 0, sid = 0;
  int inherited = -1;
  std::string stdin_path, extra;
  lines >> pid >> sid >> inherited >> stdin_path >> extra;
  INFO("log: " << ReadFile(spec.log_path));
  for (const Status& result : results) CHECK_MESSAGE(result.ok(), result.message());
  CHECK(extra.empty());  // one winner only
  REQUIRE(pid > 0);
  CHECK(kill(pid, 0) == 0);
  CHECK(sid != getsid(0));
  CHECK(inherited == 0);
  CHECK(stdin_path == "/dev/null");
  CHECK(Contains(ReadFile(spec.log_path), "fake daemon up"));
  CHECK(Contains(ReadFile(spec.log_path), "lost the lock"));  // the race did happen
  struct stat log_dir;
  REQUIRE(stat(dir.File("log").c_str(), &log_dir) == 0);
  CHECK((log_dir.st_mode & 0777) == 0700);

  // Now it listens: a later call connects and starts nothing.
  CHECK(DaemonLauncher::EnsureDaemon(spec).ok());
  CHECK(ReadFile(pids) == std::to_string(pid) + " " + std::to_string(sid) + " 0 /dev/null\n");
  Result<int> fd = ConnectUnix(spec.socket_path);
  CHECK(fd.ok());
  if (fd.ok()) close(fd.value());
  kill(pid, SIGKILL);
}

TEST_CASE("daemon launcher returns at once when a daemon already listens") {
  TempDir dir;
  const int server = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(server >= 0);
  struct sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  const std::string path = dir.File("sock");
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  REQUIRE(bind(server, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(listen(server, 4) == 0);

  LaunchSpec spec;
  spec.socket_path = path;
  spec.daemon_argv = {"/bin/false"};
  spec.log_path = dir.File("daemon.log");
  CHECK(DaemonLauncher::EnsureDaemon(spec).ok());
  CHECK(!std::filesystem::exists(spec.log_path));  // nothing was started
  close(server);
}

TEST_CASE("daemon launcher reports a daemon that exits without a ready byte") {
  TempDir dir;
  LaunchSpec spec;
  spec.socket_path = dir.File("sock");
  spec.log_path = dir.File("daemon.log");
  for (const std::vector<std::string>& argv :
       std::vector<std::vector<std::string>>{{"/bin/false"},
                                             {"/bin/sh", "-c", "echo daemon-said-hello; exit 0"},
                                             {"/nonexistent/gshare"}}) {
    spec.daemon_argv = argv;
    const auto start = std::chrono::steady_clock::now();
    const Status status = DaemonLauncher::EnsureDaemon(spec);
    CHECK(!status.ok());
    CHECK(status.message() == "the daemon did not start (see " + spec.log_path + ")");
    CHECK(IsDaemonUnreachable(status));                                  // a submit may try again
    CHECK(std::chrono::steady_clock::now() - start < spec.timeout / 2);  // EOF, not the timeout
  }
  CHECK(Contains(ReadFile(spec.log_path), "daemon-said-hello"));
}

TEST_CASE("daemon launcher gives up on a daemon that never gets ready") {
  TempDir dir;
  LaunchSpec spec;
  spec.socket_path = dir.File("sock");
  spec.log_path = dir.File("daemon.log");
  spec.daemon_argv = {"/bin/sh", "-c", "echo $$ > " + dir.File("pid") + "; exec sleep 30", "sh"};
  spec.timeout = std::chrono::milliseconds(300);
  const Status status = DaemonLauncher::EnsureDaemon(spec);
  KillFromPidFile(dir.File("pid"));
  CHECK(!status.ok());
  CHECK(Contains(status.message(), "did not start"));
}

TEST_CASE("daemon launcher's ConnectUnix names the path it could not reach") {
  Result<int> fd = ConnectUnix("/nonexistent/gshare.sock");
  REQUIRE(!fd.ok());
  CHECK(fd.status().message() ==
        "cannot connect to /nonexistent/gshare.sock: No such file or directory");
  CHECK(IsDaemonUnreachable(fd.status()));
  Result<int> too_long = ConnectUnix(std::string(200, 'x'));
  REQUIRE(!too_long.ok());
  CHECK_FALSE(IsDaemonUnreachable(too_long.status()));  // trying again cannot help
  CHECK_FALSE(IsDaemonUnreachable(Status::Error("the daemon closed the connection")));
}

}  // namespace
}  // namespace gshare::unit_daemon_launcher
