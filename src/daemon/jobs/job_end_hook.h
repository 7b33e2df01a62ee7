// The command run when a job ends ([notify] command; pueue's callback): /bin/sh -c COMMAND, as
// the job's owner (the system daemon drops to them; a user's daemon is them already), in its
// own session, detached (stdin, stdout and stderr /dev/null; the daemon ignores SIGCHLD, so it
// is reaped by the kernel), with the job's fields in its environment. The daemon does not wait
// for it: a slow hook delays nothing, a failing one changes nothing. Daemon thread only.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "runner/job_identity.h"
#include "model/job_record.h"

namespace gshare {

// The hook's whole environment, "NAME=value" each: PATH=/usr/bin:/bin, HOME, USER and LOGNAME of
// `user` (`home` may be ""), and the job's fields: GSHARE_JOB_ID, _NAME, _STATE (COMPLETED,
// FAILED, ...), _EXIT_CODE and _SIGNAL ("" when none), _REASON, _USER, _UID, _SUBMIT_TIME,
// _START_TIME, _END_TIME (unix seconds, "" when unknown), _ELAPSED (seconds), _COMMAND (its argv
// joined by spaces), _CWD, _OUTPUT (its -o pattern as given), _GPU (its slot), _MAIL_USER and
// _MAIL_TYPE (--mail-user, --mail-type as base/mail_type.h writes it; "" when not given). Pure.
std::vector<std::string> JobEndHookEnv(const JobRecord& r, const std::string& user,
                                       const std::string& home);

// Starts `command` for ended job `r` as `who`; an error when fork fails. The child exits 126
// when it cannot become `who` (it never runs a user's hook as root).
Status StartJobEndHook(const std::string& command, const JobRecord& r, const JobIdentity& who,
                       const std::string& home);

}  // namespace gshare
