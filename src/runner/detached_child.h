// The start of a process the daemon starts and does not wait for (a job supervisor, the
// [notify] command): called in the child between fork and exec. Async-signal-safe.
#pragma once

namespace gshare {

// Its own session, so that neither the daemon's end nor a terminal reaches it; default handling
// of the signals the daemon ignores or catches (SIGCHLD, SIGPIPE, SIGHUP, SIGTERM, SIGINT); no
// signal blocked; stdin on /dev/null, and stdout and stderr too when `quiet`.
void DetachChild(bool quiet) noexcept;

}  // namespace gshare
