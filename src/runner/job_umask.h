// The umask of submitted jobs: the daemon works under 077 (all it creates is its owner's
// alone), and its job supervisors give their jobs back the umask the daemon started with,
// handed down in $GSHARE_JOB_UMASK. Call from the main thread before other threads start
// (they change the process's umask and environment).
#pragma once

namespace gshare {

// Sets the umask to 077 and keeps the one it replaces in $GSHARE_JOB_UMASK for the job
// supervisors the daemon starts.
void SetPrivateUmask();

// In a job supervisor: the umask the daemon started with (from $GSHARE_JOB_UMASK, then removed
// from the environment). A missing or malformed value leaves the umask as it is.
void RestoreJobUmask();

}  // namespace gshare
