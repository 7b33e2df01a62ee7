// Where a program named on a command line is found, as execvp(3) finds it: a name holding a
// '/' is itself; any other is searched in the directories of PATH (unset: /usr/local/bin,
// /usr/bin, /bin; an empty entry is the current directory) for a regular file this process may
// execute. Reads the environment and the file system; any thread.
#pragma once

#include <string>

namespace gshare {

// The path that runs `name`, or "" when none is executable.
std::string FindProgram(const std::string& name);

}  // namespace gshare
