// Issue 21: which daemon a client talks to.
#include "ipc/daemon_choice.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace gshare::unit_daemon_choice {
namespace {

const std::string kSystem = "/run/gshare/gshare.sock";
const std::string kUser = "/run/user/1000/gshare/gshare.sock";

TEST_CASE("issue21: the system daemon is chosen when it answers, else the user's") {
  std::vector<std::string> asked;
  auto answers = [&asked](bool up) {
    return [&asked, up](const std::string& path) {
      asked.push_back(path);
      return up;
    };
  };
  DaemonChoice up = ChooseDaemon("", kSystem, kUser, answers(true));
  CHECK(up.scope == DaemonScope::kSystem);
  CHECK(up.socket == kSystem);
  CHECK(asked == std::vector<std::string>{kSystem});
  asked.clear();
  DaemonChoice down = ChooseDaemon("", kSystem, kUser, answers(false));
  CHECK(down.scope == DaemonScope::kUser);
  CHECK(down.socket == kUser);
  CHECK(asked == std::vector<std::string>{kSystem});
  CHECK(std::string(DaemonScopeName(up.scope)) == "system");
  CHECK(std::string(DaemonScopeName(down.scope)) == "user");
}

TEST_CASE("issue21: an explicit socket wins and is not probed") {
  bool probed = false;
  auto answers = [&probed](const std::string&) {
    probed = true;
    return true;
  };
  DaemonChoice own = ChooseDaemon("/tmp/mine.sock", kSystem, kUser, answers);
  CHECK(own.scope == DaemonScope::kUser);
  CHECK(own.socket == "/tmp/mine.sock");
  // A job of the system daemon gets its socket as GSHARE_SOCKET: still the system daemon.
  DaemonChoice job = ChooseDaemon(kSystem, kSystem, kUser, answers);
  CHECK(job.scope == DaemonScope::kSystem);
  CHECK(job.socket == kSystem);
  CHECK_FALSE(probed);
}

}  // namespace
}  // namespace gshare::unit_daemon_choice
