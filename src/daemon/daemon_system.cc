// What the system daemon (`gshare daemon --system`) does differently from a user's own: whom it
// accepts (where each user's job files live and whom a job's supervisor runs as:
// job_processes.h; jobs read through the socket by users who cannot open the database:
// job_list_reply.h). The daemon's thread.
#include <unistd.h>

#include "daemon/daemon.h"

namespace gshare {

bool Daemon::AcceptsUid(uid_t uid) const {
  // The system daemon serves everyone the socket's mode lets in; who may do what to whose
  // job is decided per request. A user's own daemon serves that user (and root).
  return options_.system || uid == getuid() || uid == 0;
}

}  // namespace gshare
