// What lies at the job database's path before SQLite opens it: nothing (a fresh queue is made
// there), a database, or something else, which is refused rather than opened: SQLite takes
// an empty file for an empty database, and a queue would be lost without a word. Any thread;
// reads the file system.
#pragma once

#include <functional>
#include <string>

#include "base/status.h"

namespace gshare {

enum class DatabaseFile {
  kMissing,  // nothing at the path: a fresh database may be made there
  kSqlite,   // a regular file that starts with SQLite's header
};

// What is at `path`. Errors, each one line naming the path and beginning "job store PATH: not
// a database": an empty file, a file without SQLite's header, a directory or other non-file,
// one that cannot be read (with the errno text).
Result<DatabaseFile> InspectDatabaseFile(const std::string& path);

// Makes `path` ready to be opened as the job database: its missing parent directories are
// made (0700); with nothing there, `create(fresh)` makes a new database at a temporary path
// beside it, which is then renamed into place, so that a process that dies meanwhile leaves
// no empty file at `path` for the next one to refuse. A database there is left as it is;
// anything else is refused with InspectDatabaseFile's error. Errors name `path`.
Status PrepareDatabaseFile(const std::string& path,
                           const std::function<Status(const std::string& fresh)>& create);

}  // namespace gshare
