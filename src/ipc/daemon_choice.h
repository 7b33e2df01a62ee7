// Which daemon a client talks to, and how it reads that daemon's jobs (docs/cli.md "The
// daemon"): an explicit socket, else the system daemon when it answers, else the user's own
// (started on demand). Every command, the Slurm hooks among them, chooses by this one rule.
// The rule is pure; who listens at a socket is asked through a callback. Any thread.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>

namespace gshare {

enum class DaemonScope {
  kSystem,  // the machine's daemon (`gshare daemon --system`), serving every user
  kUser,    // this user's own daemon, started by the first client that finds none
};

struct DaemonChoice {
  DaemonScope scope = DaemonScope::kUser;
  std::string socket;
  // The daemon is this user's daemon of their own state directory (or none answers there yet,
  // and the one started will be): its database may be read directly. Otherwise its jobs are
  // asked of it (protocol.h kListJobs): users cannot read the system daemon's database, and
  // another state directory's database is not the one beside this user's config.
  bool own_database = true;
};

// What ChooseDaemon may ask about the machine.
struct DaemonProbe {
  // The uid of the trusted daemon accepting connections at a socket path; nullopt when none
  // does (ipc/daemon_launcher.h ConnectUnix).
  std::function<std::optional<uid_t>(const std::string&)> listener;
  // The socket this user's daemon of their own state directory serves (its daemon.json, read
  // only when that daemon is alive); "" when none runs.
  std::string own_socket;
  uid_t me = 0;  // the client's uid
};

// "system" or "user", as `gshare status` prints it.
const char* DaemonScopeName(DaemonScope scope);

// The daemon to use.
// 1. `explicit_socket` ($GSHARE_SOCKET or [daemon] socket; empty when unset) wins. It is the
//    system daemon when it names `system_socket`, or when root's daemon listens there and the
//    client is not root (a Slurm task's GSHARE_SOCKET where the system socket is elsewhere).
//    It is the user's own database when it names probe.own_socket or nothing listens there;
//    any other daemon there is asked for its jobs.
// 2. Else `system_socket` when a trusted daemon listens there.
// 3. Else `user_socket`, the user's own.
// probe.listener is called at most once.
DaemonChoice ChooseDaemon(const std::string& explicit_socket, const std::string& system_socket,
                          const std::string& user_socket, const DaemonProbe& probe);

}  // namespace gshare
