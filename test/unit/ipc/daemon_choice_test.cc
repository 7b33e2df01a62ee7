// Issue 21, and the hostile-users issue's "one socket choice": which daemon a client talks to
// and whether it may read that daemon's database.
#include "ipc/daemon_choice.h"

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

namespace gshare::unit_daemon_choice {
namespace {

const std::string kSystem = "/run/gshare/gshare.sock";
const std::string kUser = "/run/user/1000/gshare/gshare.sock";
constexpr uid_t kMe = 1000;

// A machine where `listening` maps sockets to their daemons' uids; `asked` records each probe.
struct Machine {
  std::map<std::string, uid_t> listening;
  std::vector<std::string> asked;
  std::string own_socket;
  DaemonProbe Probe() {
    DaemonProbe probe;
    probe.me = kMe;
    probe.own_socket = own_socket;
    probe.listener = [this](const std::string& path) -> std::optional<uid_t> {
      asked.push_back(path);
      auto it = listening.find(path);
      return it == listening.end() ? std::nullopt : std::optional<uid_t>(it->second);
    };
    return probe;
  }
};

TEST_CASE("the system daemon is chosen when it answers, else the user's") {
  Machine m;
  m.listening[kSystem] = 0;
  DaemonChoice up = ChooseDaemon("", kSystem, kUser, m.Probe());
  CHECK(up.scope == DaemonScope::kSystem);
  CHECK(up.socket == kSystem);
  CHECK_FALSE(up.own_database);
  CHECK(m.asked == std::vector<std::string>{kSystem});
  m.asked.clear();
  m.listening.clear();
  DaemonChoice down = ChooseDaemon("", kSystem, kUser, m.Probe());
  CHECK(down.scope == DaemonScope::kUser);
  CHECK(down.socket == kUser);
  CHECK(down.own_database);
  CHECK(m.asked == std::vector<std::string>{kSystem});
  CHECK(std::string(DaemonScopeName(up.scope)) == "system");
  CHECK(std::string(DaemonScopeName(down.scope)) == "user");
}

TEST_CASE("an explicit socket wins over the system daemon") {
  Machine m;
  m.listening[kSystem] = 0;
  DaemonChoice own = ChooseDaemon("/tmp/mine.sock", kSystem, kUser, m.Probe());
  CHECK(own.scope == DaemonScope::kUser);
  CHECK(own.socket == "/tmp/mine.sock");
  CHECK(own.own_database);  // nothing listens there yet: the user's daemon will
  // A job of the system daemon gets its socket as GSHARE_SOCKET: still the system daemon.
  m.asked.clear();
  DaemonChoice job = ChooseDaemon(kSystem, kSystem, kUser, m.Probe());
  CHECK(job.scope == DaemonScope::kSystem);
  CHECK(job.socket == kSystem);
  CHECK_FALSE(job.own_database);
  CHECK(m.asked.empty());
}

TEST_CASE("hostile users: a Slurm task's GSHARE_SOCKET reaches the system daemon's jobs") {
  // The task prolog exports the system daemon's socket, which this user's rules place
  // elsewhere (no GSHARE_SYSTEM_SOCKET in the task): root listens there, so it is the system
  // daemon, whose jobs are asked for, not read from the user's own database.
  Machine m;
  const std::string slurm = "/srv/gshare/run/gshare.sock";
  m.listening[slurm] = 0;
  DaemonChoice task = ChooseDaemon(slurm, kSystem, kUser, m.Probe());
  CHECK(task.scope == DaemonScope::kSystem);
  CHECK(task.socket == slurm);
  CHECK_FALSE(task.own_database);
  CHECK(m.asked == std::vector<std::string>{slurm});
}

TEST_CASE("hostile users: an explicit socket's database is read only when it is the user's own") {
  Machine m;
  const std::string other = "/tmp/other-state.sock";
  m.listening[other] = kMe;  // the user's daemon of another state directory
  m.own_socket = kUser;      // the user's daemon of this one serves elsewhere
  DaemonChoice elsewhere = ChooseDaemon(other, kSystem, kUser, m.Probe());
  CHECK(elsewhere.scope == DaemonScope::kUser);
  CHECK_FALSE(elsewhere.own_database);
  // The socket the user's own daemon records: its database, without a probe.
  m.asked.clear();
  m.own_socket = other;
  DaemonChoice own = ChooseDaemon(other, kSystem, kUser, m.Probe());
  CHECK(own.own_database);
  CHECK(m.asked.empty());
}

}  // namespace
}  // namespace gshare::unit_daemon_choice
