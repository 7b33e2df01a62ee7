// How a foreground `gshare run` reports its job's end to a daemon that may not answer (docs/cli.md
// "A daemon that does not answer"): `gshare run` exits with its command's status once the
// command ends, and the end is still recorded when the daemon answers again. Main thread only;
// ReportAfterRegistration forks.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "cli/cli.h"
#include "ipc/daemon_link.h"
#include "ipc/job_end.h"

namespace gshare {

// How long a detached reporter (ReportAfterRegistration) waits for a daemon that does not
// answer: past it the daemon, if it ever answers, records the job FAILED ("gshare run exited
// early"), as for any runner that left without a report.
inline constexpr std::chrono::minutes kLateReportPatience{60};

// Reports `end` of registered job `job_id` over `link`, waiting up to its timeout. A daemon that
// does not answer in time reads the report from the connection when it runs again (the
// connection's bytes outlive our end of it); the end file (ipc/job_end.h, in ctx.state_dir)
// carries it to a daemon that dies before. A daemon that closed the connection (it restarted)
// is told over a new one, else by the end file. Says on stderr, unless `quiet`, when the daemon
// did not answer. `token` (the job's) proves a report on a new connection is the runner's.
void ReportEnd(DaemonLink& link, const ClientContext& ctx, int64_t job_id, const std::string& token,
               const JobEnd& end, bool quiet);

// The end of a job whose registration (kRunRegister) the daemon has not answered: the job ran
// unshared. When the reply has come meanwhile, the end is reported over `link` at once (within
// its timeout). Otherwise a detached process (its own session, stdio on /dev/null) keeps the
// connection, waits up to `patience` for the reply and then reports the end, with no end
// time (the daemon's, when it answers, is the only one its record can have: it starts the job
// then); the caller returns at once, and its copy of the connection is closed.
void ReportAfterRegistration(DaemonLink& link, JobEnd end, std::chrono::milliseconds patience);

}  // namespace gshare
