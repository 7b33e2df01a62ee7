// The system daemon's files (docs/design.md "The system daemon"): its socket's directory and
// socket open to every user (or one group), its state directory traversable but not readable,
// and one directory per user for the files that user's job supervisors write. Called from
// the daemon's thread, as root; errors are one line naming the path and what is wrong.
#pragma once

#include <sys/types.h>

#include <string>

#include "base/status.h"

namespace gshare {

// The socket's directory (e.g. /run/gshare): created 0755 when missing (its parent is not);
// it must be a real directory of root (this process's uid) that nobody else may write, as
// clients check it (socket_trust.h); it is made 0755 so that every user reaches the socket.
Status PrepareSystemSocketDir(const std::string& socket_path);

// The socket itself, once bound: 0666 when `group` is empty, else root:`group` 0660. Error
// for an unknown group or a failed chown/chmod.
Status ShareSocket(const std::string& socket_path, const std::string& group);

// The state directory made as PrepareStateDir does (owned by this uid, created when missing),
// then mode 0711: users may pass through to their own directory below (UserJobDir) but cannot
// list it; the database and daemon.log stay 0600.
Status PrepareSystemStateDir(const std::string& state_dir);

// <state_dir>/users/<uid>: where user `uid`'s job supervisors leave their end and start
// markers, scripts and default logs.
std::string UserJobDir(const std::string& state_dir, uid_t uid);

// Makes UserJobDir ready: `users` and `users/<uid>` real directories of root, 0711 (the user
// cannot rename or replace what lies in them), and in it `jobs`, `logs` and `scripts`, real
// directories of uid:gid, 0700 (only the user and root see into them). What exists with
// another owner or mode is corrected; a symbolic link or a non-directory is an error.
Status PrepareUserJobDir(const std::string& state_dir, uid_t uid, gid_t gid);

}  // namespace gshare
