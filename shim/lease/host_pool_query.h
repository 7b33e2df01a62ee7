// The host pool shared by the processes of this job owner's jobs (kHostPoolQuery / kHostPool,
// gshare/protocol.h; memory/shared_pool.h says what is in it).
#pragma once

namespace gshare::shim {

// Asks the daemon for the pool on a connection of its own, opened and closed here (as
// QueryJobMemory does). Returns the pool's memory file (a descriptor the caller owns, close on
// exec), or -1 when the process is not in a gshare job, no trusted daemon answers within
// kAnswerMs (memory_view.h), or the daemon has no pool for it. Blocks for at most about
// 2 * kAnswerMs. Any thread; not for signal handlers.
int QueryHostPool();

}  // namespace gshare::shim
