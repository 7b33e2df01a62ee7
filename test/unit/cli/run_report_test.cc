// How `gshare run` reports its job's end to a daemon that may not answer, against a daemon
// played by the test on the other end of a socketpair.
#include "cli/run_report.h"

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include <doctest/doctest.h>

#include "ipc/job_json.h"
#include "ipc/replies.h"
#include "ipc/requests.h"
#include "temp_dir.h"

namespace gshare::unit_run_report {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct Pair {
  std::unique_ptr<DaemonLink> link;
  int daemon = -1;
  ~Pair() {
    if (daemon >= 0) close(daemon);
  }
};

Pair Connect() {
  int fds[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
  return Pair{std::make_unique<DaemonLink>(fds[0], 200ms), fds[1]};
}

Frame ReadRequest(int fd, std::chrono::milliseconds patience = 5s) {
  Result<Frame> f = ReadFrame(fd, proto::kMaxRequestPayload, DeadlineIn(patience));
  REQUIRE(f.ok());
  return f.value();
}

void Reply(int fd, const std::string& text) {
  REQUIRE(WriteAll(fd, EncodeFrame(proto::MsgType::kReply, text)).ok());
}

JobEnd Completed() {
  JobEnd end;
  end.exit_code = 0;
  end.end_time = 1.7e9;
  return end;
}

TEST_CASE("hostile users: an unanswered end report returns in time and leaves the end file") {
  TempDir dir;
  Pair p = Connect();
  ClientContext ctx;
  ctx.state_dir = dir.path();
  ctx.socket_path = ctx.serve_socket_path = dir.path() + "/none.sock";
  const auto start = Clock::now();
  ReportEnd(*p.link, ctx, 12, "tok", Completed(), /*quiet=*/true);
  CHECK(Clock::now() - start < 2s);
  std::optional<JobEnd> left = ReadJobEnd(JobEndPath(dir.path(), 12));
  REQUIRE(left);
  CHECK(left->exit_code == 0);
  // The report waits in the connection for the daemon, which records it when it reads again.
  Frame report = ReadRequest(p.daemon);
  CHECK(report.type == proto::MsgType::kRunEnded);
  Result<RunEndedRequest> parsed = RunEndedRequest::Parse(nlohmann::json::parse(report.payload));
  REQUIRE(parsed.ok());
  CHECK(parsed->job_id == 12);
  CHECK(parsed->token == "tok");  // a new connection's report is proven by it
}

TEST_CASE("hostile users: a registration answered while the job ran gets its end at once") {
  Pair p = Connect();
  REQUIRE(p.link->Post(proto::MsgType::kRunRegister, nlohmann::json::object()).ok());
  Reply(p.daemon, JobIdReply{7, true, false, "t"}.ToJsonText());
  Reply(p.daemon, ToJsonText(nlohmann::json{{"ok", true}}));  // to the end report, ahead
  REQUIRE(p.link->Readable());
  ReportAfterRegistration(*p.link, Completed(), 5s);
  ReadRequest(p.daemon);  // the registration
  Frame report = ReadRequest(p.daemon);
  REQUIRE(report.type == proto::MsgType::kRunEnded);
  Result<RunEndedRequest> parsed = RunEndedRequest::Parse(nlohmann::json::parse(report.payload));
  REQUIRE(parsed.ok());
  CHECK(parsed->job_id == 7);
  CHECK(parsed->end.end_time == 1.7e9);  // the daemon started it while it ran
}

TEST_CASE("hostile users: a registration still unanswered is finished by a detached reporter") {
  Pair p = Connect();
  REQUIRE(p.link->Post(proto::MsgType::kRunRegister, nlohmann::json::object()).ok());
  std::fflush(nullptr);
  const pid_t before = getpid();
  const auto start = Clock::now();
  ReportAfterRegistration(*p.link, Completed(), 5s);
  REQUIRE(getpid() == before);  // the reporter never comes back here
  CHECK(Clock::now() - start < 1s);
  p.link.reset();  // our copy of the connection; the reporter keeps its own
  CHECK(ReadRequest(p.daemon).type == proto::MsgType::kRunRegister);
  // The daemon comes back and answers: the reporter tells it the end, without an end time.
  Reply(p.daemon, JobIdReply{9, true, false, "t"}.ToJsonText());
  Frame report = ReadRequest(p.daemon);
  REQUIRE(report.type == proto::MsgType::kRunEnded);
  Result<RunEndedRequest> parsed = RunEndedRequest::Parse(nlohmann::json::parse(report.payload));
  REQUIRE(parsed.ok());
  CHECK(parsed->job_id == 9);
  CHECK(parsed->end.exit_code == 0);
  CHECK_FALSE(parsed->end.end_time);
  Reply(p.daemon, ToJsonText(nlohmann::json{{"ok", true}}));
  // Then it leaves: the connection closes.
  char byte;
  CHECK(read(p.daemon, &byte, 1) == 0);
}

}  // namespace
}  // namespace gshare::unit_run_report
