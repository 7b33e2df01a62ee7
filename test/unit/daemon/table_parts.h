// What the tests of the daemon's parts put in a JobTable: connections and active jobs with the
// fields the parts read. Test threads only.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <utility>

#include "daemon/state/job_table.h"

namespace gshare::unit_table_parts {

// Connection `id` of `kind` for job `job`, process `pid`.
inline Connection& AddConn(JobTable& t, ConnId id, JobId job, Connection::Kind kind,
                           pid_t pid = 0) {
  auto c = std::make_unique<Connection>();
  c->id = id;
  c->job = job;
  c->kind = kind;
  c->pid = pid;
  Connection& ref = *c;
  t.conns[id] = std::move(c);
  return ref;
}

// Active job `id` of `uid`, placed on GPU slots `slot` ("0,1"), RUNNING.
inline ActiveJob& AddJob(JobTable& t, JobId id, uid_t uid, const std::string& slot = "") {
  auto j = std::make_unique<ActiveJob>();
  j->record.id = static_cast<int64_t>(id);
  j->record.uid = uid;
  j->record.slot = slot;
  j->record.state = JobState::kRunning;
  ActiveJob& ref = *j;
  t.jobs[id] = std::move(j);
  return ref;
}

}  // namespace gshare::unit_table_parts
