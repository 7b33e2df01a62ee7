// The daemon's directories before it serves (issue 27): the socket's directory and the state
// directory made or checked so that only their owner can use them, and the database's files
// kept private. Called from the daemon's thread before it serves; errors are one line naming
// the path and what is wrong.
#pragma once

#include <string>

#include "base/status.h"

namespace gshare {

// Makes the directory of `socket_path` ready to hold the daemon's socket. The standard
// runtime directory (include/gshare/paths.h RuntimeDir: $XDG_RUNTIME_DIR/gshare,
// /run/user/UID/gshare or /tmp/gshare-UID) is created 0700 when missing (its parent is not);
// when present it must be a directory, not a symbolic link, owned by this user, and it is
// made 0700. Any other directory is never created and must be one clients trust
// (socket_trust.h UntrustedDirReason). Error otherwise.
Status PrepareSocketDir(const std::string& socket_path);

// Makes the state directory (created 0700 with missing parents) private: an existing one must
// be a directory owned by this user; group and other permissions are taken away (logged).
// Error when it belongs to someone else or cannot be tightened.
Status PrepareStateDir(const std::string& state_dir);

// Takes group and other permissions away from the database and its -wal and -shm files where
// they exist (SQLite gives new -wal and -shm files the database's mode). Error when one
// cannot be changed.
Status PrivateDatabaseFiles(const std::string& database_path);

}  // namespace gshare
