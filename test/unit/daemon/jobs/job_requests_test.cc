// JobRequests: a `gshare run` registered (waiting while held, else started with its GPUs; a
// second registration drops the connection), a submission (its retry answered with the job it
// made; an array's tasks), a supervisor attaching (only the process the daemon started; what
// it is told to run), and start and end reports from the wrong connections; against a real
// store, a real supervisor process and the parts as the daemon wires them.
#include "daemon/jobs/job_requests.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "daemon/lifecycle_parts.h"
#include "daemon/table_parts.h"
#include "ipc/job_json.h"
#include "policy/access.h"

namespace gshare::unit_job_requests {
namespace {

using json = nlohmann::json;

constexpr uint32_t kAlice = 5001;

struct Fixture : unit_lifecycle_parts::ControlParts {
  JobRequests requests{*lifecycle, access, [this] { return gpu_count; }, transport};

  Connection& Connect(pid_t pid = 4242) { return ControlParts::Connect(kAlice, pid); }
  // A job's options as the CLI sends them (the quantum resolved from its config).
  static json Options() {
    JobRecord r = SubmittedJob(JobState::kPending);
    r.quantum_ms = 1000;
    return JobOptionsToJson(r);
  }
  // The job options of a submitted job, as `gshare submit` sends them.
  static json Submission(const std::string& key = "") {
    json req = Options();
    req["env"] = {"HOME=/home/alice", "GSHARE_ARRAY_TASK_ID=9"};
    req["script"] = nullptr;
    if (!key.empty()) req["submit_key"] = key;
    return req;
  }
};

TEST_CASE("a held `gshare run` waits; another starts with its GPUs; one registration only") {
  Fixture f;
  json held = Fixture::Options();
  held["held"] = true;
  Connection& waiting = f.Connect();
  f.requests.OnRunRegister(waiting, held);
  REQUIRE(f.replies.size() == 1);
  CHECK(f.replies[0]["ok"] == true);
  CHECK(f.replies[0]["admitted"] == false);
  const int64_t w = f.replies[0]["job_id"];
  CHECK(f.queue->Pending(w) != nullptr);
  CHECK(waiting.kind == Connection::Kind::kRunner);
  CHECK(f.Stored(w).kind == JobKind::kRun);
  CHECK(f.Stored(w).runner_pid == 4242);

  Connection& now = f.Connect();
  f.requests.OnRunRegister(now, Fixture::Options());
  REQUIRE(f.replies.size() == 2);
  CHECK_FALSE(f.replies[1].contains("admitted"));  // admitted: the default
  const int64_t n = f.replies[1]["job_id"];
  REQUIRE(f.table.jobs.count(n) == 1);
  CHECK(f.table.jobs.at(n)->record.slot == "0");
  CHECK(f.replies[1]["token"] == f.Stored(n).token);
  CHECK(f.Stored(n).token.size() == 32);

  f.requests.OnRunRegister(now, Fixture::Options());
  CHECK(f.drops == std::vector<std::string>{"second registration"});
}

TEST_CASE("a submission retried with its key is the job it made; an array queues its tasks") {
  Fixture f;
  REQUIRE(f.queue->SetPaused(true).ok());
  f.requests.OnSubmit(f.Connect(), Fixture::Submission("key-1"));
  f.requests.OnSubmit(f.Connect(), Fixture::Submission("key-1"));
  REQUIRE(f.replies.size() == 2);
  const int64_t id = f.replies[0]["job_id"];
  CHECK(f.replies[1]["job_id"] == id);
  CHECK(f.replies[1]["existing"] == true);
  CHECK(f.queue->pending().size() == 1);
  CHECK(f.Stored(id).uid == kAlice);
  CHECK(f.Stored(id).output == f.dir.path() + "/logs/%j.out");

  json array = Fixture::Submission("key-2");
  array["array"] = "1-3%2";
  f.requests.OnSubmit(f.Connect(), array);
  REQUIRE(f.replies.size() == 3);
  CHECK(f.replies[2]["ok"] == true);
  CHECK(f.queue->pending().size() == 4);
  array["array"] = "3-1";
  array["submit_key"] = "key-3";
  f.requests.OnSubmit(f.Connect(), array);
  CHECK(f.replies[3]["ok"] == false);
  CHECK(f.replies[3]["error"].get<std::string>().rfind("bad job options: --array: ", 0) == 0);
  CHECK(f.queue->pending().size() == 4);
}

TEST_CASE("only the supervisor the daemon started attaches, and learns what to run") {
  Fixture f;
  f.requests.OnSubmit(f.Connect(), Fixture::Submission());
  const int64_t id = f.replies.at(0)["job_id"];
  f.lifecycle->Tick(f.clock.Now());  // admitted: its supervisor started
  const JobRecord& r = f.table.jobs.at(id)->record;
  REQUIRE(r.runner_pid);

  Connection& stranger = f.Connect(*r.runner_pid + 1);
  f.requests.OnRunAttach(stranger, json{{"job_id", id}});
  CHECK(f.replies.at(1)["ok"] == false);
  CHECK(stranger.kind == Connection::Kind::kUnknown);

  Connection& supervisor = f.Connect(*r.runner_pid);
  f.requests.OnRunAttach(supervisor, json{{"job_id", id}});
  const json& spec = f.replies.at(2);
  REQUIRE(spec["ok"] == true);
  CHECK(spec["argv"] == json{"true"});
  CHECK(spec["env"] == json{"HOME=/home/alice"});  // not a task of an array itself
  CHECK(spec["set_env"]["GSHARE_JOB_ID"] == std::to_string(id));
  CHECK(spec["set_env"]["GSHARE_JOB_TOKEN"] == r.token);
  CHECK(spec["end_path"] == JobEndPath(f.dir.path(), id));
  CHECK(supervisor.kind == Connection::Kind::kRunner);
  CHECK_FALSE(f.table.jobs.at(id)->orphan);

  f.requests.OnRunStarted(stranger, json{{"job_id", id}, {"pid", 77}});
  CHECK(f.drops == std::vector<std::string>{"start without a job"});
  f.requests.OnRunStarted(supervisor, json{{"job_id", id}, {"pid", 77}});
  CHECK(f.Stored(id).pid == 77);
  // An end report from elsewhere counts only for a job whose supervisor is not connected: one
  // without the job's token is denied, one with it is told to leave it to the supervisor.
  Connection& other = f.Connect();
  f.requests.OnRunEnded(other, json{{"job_id", id}, {"exit_code", 0}});
  CHECK(f.replies.back()["error"].get<std::string>().starts_with(kPermissionDenied));
  f.requests.OnRunEnded(other, json{{"job_id", id}, {"exit_code", 0}, {"token", r.token}});
  CHECK(f.replies.back()["error"] ==
        "job " + std::to_string(id) +
            " has its runner connected: only that connection reports its end");
  CHECK(f.Stored(id).state == JobState::kRunning);
  f.requests.OnRunEnded(supervisor, json{{"job_id", id}, {"exit_code", 0}});
  CHECK(f.replies.back()["ok"] == true);
  CHECK(f.Stored(id).state == JobState::kCompleted);
  f.requests.OnRunEnded(other, json{{"job_id", id}, {"exit_code", 0}});
  CHECK(f.replies.back()["already_recorded"] == true);
}

}  // namespace
}  // namespace gshare::unit_job_requests
