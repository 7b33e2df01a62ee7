#include "cli/run_report.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "ipc/replies.h"
#include "ipc/requests.h"

namespace gshare {
namespace {

// The job id of a registration's reply; 0 when the daemon refused it or the reply is bad.
int64_t RegisteredId(const Result<nlohmann::json>& reply) {
  if (!reply.ok()) return 0;
  Result<JobIdReply> registered = JobIdReply::Parse(reply.value());
  return registered.ok() ? registered->job_id : 0;
}

}  // namespace

void ReportEnd(DaemonLink& link, const ClientContext& ctx, int64_t job_id, const std::string& token,
               const JobEnd& end, bool quiet) {
  const nlohmann::json report = RunEndedRequest{job_id, end, token}.ToJson();
  Result<nlohmann::json> sent = link.Request(proto::MsgType::kRunEnded, report);
  if (sent.ok()) return;
  if (!IsDaemonTimeout(sent.status())) {
    // The daemon restarted (its successor takes reports from a new connection) or refused.
    Result<int> again = ConnectIfRunning(ctx);
    if (again.ok()) {
      DaemonLink fresh(again.value(), ReplyTimeout());
      if (fresh.Request(proto::MsgType::kRunEnded, report).ok()) return;
    }
  } else if (!quiet) {
    spdlog::warn("job {}: {}; it records the job's end when it runs again", job_id,
                 sent.status().message());
  }
  Status written = WriteJobEnd(JobEndPath(ctx.state_dir, job_id), end, job_id);
  if (!written.ok()) spdlog::debug("end not recorded: {}", written.message());
}

void ReportAfterRegistration(DaemonLink& link, JobEnd end, std::chrono::milliseconds patience) {
  if (link.Readable()) {  // the daemon came back while the job ran
    const int64_t id = RegisteredId(link.Await(DeadlineIn(ReplyTimeout())));
    // On the connection that registered the job: it is the job's runner, no token needed.
    if (id != 0) link.Request(proto::MsgType::kRunEnded, RunEndedRequest{id, end, {}}.ToJson());
    return;
  }
  const pid_t child = fork();
  if (child != 0) return;  // fork failed: the daemon records the job FAILED when it answers
  // The reporter: apart from the terminal and from whatever reads our output (a shell's
  // $(gshare run ...) waits for every writer of its pipe to close it).
  setsid();
  const int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd >= 0) {
    for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) dup2(null_fd, fd);
  }
  const int64_t id = RegisteredId(link.Await(DeadlineIn(patience)));
  if (id != 0) {
    end.end_time.reset();
    link.Request(proto::MsgType::kRunEnded, RunEndedRequest{id, end, {}}.ToJson());
  }
  _exit(0);
}

}  // namespace gshare
