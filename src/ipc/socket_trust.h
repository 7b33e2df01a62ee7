// Is the daemon behind a socket path the user's own? Clients ask before they send anything
// (issue 27): the socket's directory and the socket, by lstat, and the listener, by SO_PEERCRED.
// Any thread; no state. Errors are one line naming the path and what is wrong with it.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <string>

#include "base/status.h"

namespace gshare {

// Why a directory holding the daemon's socket cannot be trusted by user `me`, or "" when it
// can: it must be a real directory (not a symbolic link), owned by `me` or root, and writable
// by nobody else (no group or other write bit).
std::string UntrustedDirReason(const struct stat& st, uid_t me);

// The same for the socket file itself: a socket owned by `me` or root.
std::string UntrustedSocketReason(const struct stat& st, uid_t me);

// The same for the listener's uid (SO_PEERCRED): `me` or root.
std::string UntrustedPeerReason(uid_t peer, uid_t me);

// OK when the socket's directory and the socket at `socket_path` may be trusted, or when
// either does not exist (connecting fails then, and nothing can be sent). Not following
// symbolic links. Error: "refusing to use PATH: ..." naming the path and the reason.
Status CheckSocketPath(const std::string& socket_path);

// OK when the process listening at the other end of connected socket `fd` runs as this user
// or as root. Error: "refusing to use SOCKET_PATH: ...".
Status CheckPeer(int fd, const std::string& socket_path);

}  // namespace gshare
