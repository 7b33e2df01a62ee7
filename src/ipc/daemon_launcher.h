// DaemonLauncher makes sure exactly one gshare daemon serves a socket, starting it when needed,
// even when several `gshare run`s race to do so (the daemon's lock file decides who wins).
// Threads: any thread, concurrently; it forks, so the child side only makes async-signal-safe
// calls.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace gshare {

struct LaunchSpec {
  std::string socket_path;
  // The daemon's command, e.g. {"/path/gshare", "daemon", "--foreground"}; EnsureDaemon appends
  // "--ready-fd N". The daemon must write one byte to fd N: 'R' once it listens on socket_path,
  // or 'B' (then exit) when another daemon holds the lock: that one serves, on socket_path or
  // on the socket record_path names.
  std::vector<std::string> daemon_argv;
  std::chrono::milliseconds timeout{
      10000};            // for the ready byte and the connects after it, together
  std::string log_path;  // the daemon's stdout and stderr, appended; missing parent dirs made 0700
  std::string record_path;  // the live daemon's record (daemon_record.h), read after a 'B'
};

class DaemonLauncher {
 public:
  // OK when a daemon accepts connections on spec.socket_path: at once if one already does;
  // otherwise after starting spec.daemon_argv detached (new session, stdin /dev/null, output to
  // log_path, no other fds), reading its ready byte and connecting within spec.timeout.
  // `serving` (optional) gets the socket that answered: spec.socket_path, or after a 'B' the
  // one spec.record_path names. Every connect is checked as ConnectUnix checks it, and a
  // daemon that cannot be trusted is an error at once (nothing is started then).
  // Error "the daemon did not start (see LOG)" when it exits without a byte, the timeout expires
  // or no connect succeeds; other errors when the log can't be opened or fork fails.
  static Status EnsureDaemon(const LaunchSpec& spec, std::string* serving = nullptr);
};

// Connects an AF_UNIX stream socket to the daemon at path, after checking that its directory
// and socket may be trusted, and then that the listener runs as this user or root
// (socket_trust.h): nothing reaches a daemon someone else put there. Returns the connected fd
// (CLOEXEC, blocking; the caller owns and closes it), or an error naming path and the errno
// text or what is wrong with it.
Result<int> ConnectUnix(const std::string& path);

// The uid of the trusted daemon that accepts a connection at `path` (ConnectUnix, then
// SO_PEERCRED; the connection is closed at once, nothing is sent); nullopt when none does.
std::optional<uid_t> TrustedListener(const std::string& path);

// True for the errors of ConnectUnix and EnsureDaemon that mean no daemon answered (none
// listening, or the one started did not come up): a request not sent yet may be tried again.
// False for a daemon that cannot be trusted and for every other error.
bool IsDaemonUnreachable(const Status& error);

}  // namespace gshare
