// Where libgshare.so is, for the jobs that preload it. Reads the environment and the file
// system; any thread.
#pragma once

#include <string>

namespace gshare {

// $GSHARE_SHIM when set, else libgshare.so beside `self_exe` (build tree), in ../lib or in
// ../lib/gshare (installed); empty when none exists.
std::string FindShim(const std::string& self_exe);

}  // namespace gshare
