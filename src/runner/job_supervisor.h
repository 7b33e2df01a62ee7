// The supervisor of one submitted job: a `gshare job-supervisor` process the daemon starts in
// a session of its own. It asks the daemon what to run (kRunAttach), runs it with JobRunner
// (output to the job's file, its environment snapshot, its time limit), reports the start,
// and reports the end both in a file and to the daemon, so that the end is known even when
// the daemon died meanwhile. Main thread of its own process only.
#pragma once

#include <cstdint>
#include <string>

namespace gshare {

// Supervises job `job_id` of the daemon at `socket_path`. Returns the process exit status: 0
// once the end is reported (or recorded in the end file), 1 when the daemon would not give the
// job out.
int RunSupervisor(int64_t job_id, const std::string& socket_path);

}  // namespace gshare
