#include "ipc/requests.h"

#include <doctest/doctest.h>

#include <csignal>
#include <string>

namespace gshare::unit_requests {
namespace {

using json = nlohmann::json;

TEST_CASE("Requests: what a client sends is what the daemon reads") {
  JobControlRequest cancel{"cancel", {3, 4}};
  Result<JobControlRequest> c = JobControlRequest::Parse(cancel.ToJson());
  REQUIRE(c.ok());
  CHECK(c->action == "cancel");
  CHECK(c->ids == std::vector<int64_t>{3, 4});
  CHECK(c->exact_ids.empty());
  // An array task named J_T travels as an exact id, apart from the ids an array's id expands.
  JobControlRequest task{"cancel", {3}};
  task.exact_ids = {48};
  Result<JobControlRequest> t = JobControlRequest::Parse(task.ToJson());
  REQUIRE(t.ok());
  CHECK(t->ids == std::vector<int64_t>{3});
  CHECK(t->exact_ids == std::vector<int64_t>{48});
  CHECK_FALSE(
      JobControlRequest::Parse(json{{"action", "cancel"}, {"ids", {3}}, {"exact_ids", 4}}).ok());
  CHECK_FALSE(JobControlRequest::Parse(
                  json{{"action", "cancel"}, {"ids", json::array()}, {"exact_ids", {0}}})
                  .ok());
  json many{{"action", "cancel"}, {"ids", json::array()}, {"exact_ids", json::array()}};
  for (size_t i = 0; i < kMaxControlIds; ++i) many["ids"].push_back(1);
  many["exact_ids"].push_back(2);  // one past the bound, counting both lists
  CHECK_FALSE(JobControlRequest::Parse(many).ok());
  Result<JobControlRequest> p =
      JobControlRequest::Parse(JobControlRequest{"set-priority", {7}, -5}.ToJson());
  REQUIRE(p.ok());
  CHECK(p->priority == -5);
  Result<JobControlRequest> s =
      JobControlRequest::Parse(JobControlRequest{"signal", {7}, 0, SIGUSR1}.ToJson());
  REQUIRE(s.ok());
  CHECK(s->signal == SIGUSR1);
  JobControlRequest move{"resume", {7}};
  move.gpu = "1";
  Result<JobControlRequest> m = JobControlRequest::Parse(move.ToJson());
  REQUIRE(m.ok());
  CHECK(m->gpu == "1");
  CHECK(JobControlRequest::Parse(JobControlRequest{"resume", {7}}.ToJson())->gpu.empty());
  CHECK_FALSE(JobControlRequest::Parse(json{{"action", "resume"}, {"ids", {7}}, {"gpu", 1}}).ok());
  CHECK_FALSE(JobControlRequest::Parse(json{{"action", "resume"}, {"ids", {7}}, {"gpu", ""}}).ok());

  CHECK(CleanRequest::Parse(CleanRequest{86'400'000}.ToJson())->older_than_ms == 86'400'000);
  Result<RunStartedRequest> started = RunStartedRequest::Parse(RunStartedRequest{9, 4242}.ToJson());
  REQUIRE(started.ok());
  CHECK(started->job_id == 9);
  CHECK(started->pid == 4242);
  JobEnd end;
  end.exit_code = 3;
  end.end_time = 1700000000.25;
  Result<RunEndedRequest> ended = RunEndedRequest::Parse(RunEndedRequest{9, end, {}}.ToJson());
  REQUIRE(ended.ok());
  CHECK(ended->job_id == 9);
  CHECK(ended->end.exit_code == 3);
  CHECK_FALSE(ended->end.signal.has_value());
  CHECK(ended->end.end_time == 1700000000.25);
  CHECK(RunAttachRequest::Parse(RunAttachRequest{12}.ToJson())->job_id == 12);
  CHECK_FALSE(SchedulerSetRequest::Parse(SchedulerSetRequest{false}.ToJson())->enabled);
  Result<QueueSetRequest> pause = QueueSetRequest::Parse(QueueSetRequest{true, {}}.ToJson());
  REQUIRE(pause.ok());
  CHECK(pause->paused == std::optional<bool>(true));
  CHECK_FALSE(pause->max_running.has_value());
  Result<QueueSetRequest> parallel = QueueSetRequest::Parse(QueueSetRequest{{}, 4}.ToJson());
  REQUIRE(parallel.ok());
  CHECK_FALSE(parallel->paused.has_value());
  CHECK(parallel->max_running == std::optional<int>(4));
  CHECK(QueueSetRequest::Parse(QueueSetRequest{{}, 0}.ToJson())->max_running ==
        std::optional<int>(0));  // back to the config's
  CHECK(StatusRequest::Parse(StatusRequest{}.ToJson())->job_id == std::nullopt);
  CHECK(StatusRequest::Parse(StatusRequest{5}.ToJson())->job_id == 5);
  CHECK(!StatusRequest::Parse(StatusRequest{}.ToJson())->brief);
  CHECK(StatusRequest::Parse(StatusRequest{std::nullopt, true}.ToJson())->brief);
  CHECK(!StatusRequest::Parse(json{{"brief", "yes"}}).ok());
}

TEST_CASE("Requests: the daemon refuses what no client would send, in one line") {
  CHECK(JobControlRequest::Parse(json{{"action", "explode"}, {"ids", {1}}}).status().message() ==
        "unknown action \"explode\"");
  CHECK_FALSE(JobControlRequest::Parse(json{{"action", "cancel"}, {"ids", {0}}}).ok());
  CHECK_FALSE(
      JobControlRequest::Parse(json{{"action", "signal"}, {"ids", {1}}, {"signal", 0}}).ok());
  CHECK_FALSE(RunStartedRequest::Parse(json{{"job_id", 1}, {"pid", true}}).ok());
  CHECK_FALSE(RunStartedRequest::Parse(json{{"job_id", 1}, {"pid", 1}}).ok());  // init: never
  CHECK_FALSE(CleanRequest::Parse(json{{"older_than_ms", -1}}).ok());
  CHECK_FALSE(SchedulerSetRequest::Parse(json{{"enabled", 1}}).ok());
  CHECK(QueueSetRequest::Parse(json::object()).status().message() ==
        "nothing to set (paused, max_running)");
  CHECK_FALSE(QueueSetRequest::Parse(json{{"paused", 1}}).ok());
  CHECK_FALSE(QueueSetRequest::Parse(json{{"max_running", 1001}}).ok());
  CHECK_FALSE(QueueSetRequest::Parse(json{{"max_running", -1}}).ok());
  CHECK_FALSE(QueueSetRequest::Parse(json{{"max_running", "3"}}).ok());
  CHECK(StatusRequest::Parse(json{{"job_id", "1"}}).status().message() ==
        "\"job_id\" must be an integer within [1, 9223372036854775807]");
}

TEST_CASE("Requests: a job-control request names at most kMaxControlIds jobs") {
  std::vector<int64_t> ids(kMaxControlIds);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>(i) + 1;
  CHECK(JobControlRequest::Parse(JobControlRequest{"cancel", ids}.ToJson()).ok());
  ids.push_back(static_cast<int64_t>(kMaxControlIds) + 1);
  Result<JobControlRequest> over =
      JobControlRequest::Parse(JobControlRequest{"cancel", ids}.ToJson());
  REQUIRE_FALSE(over.ok());
  CHECK(over.status().message() == "too many job ids in one request (10001 > 10000)");
}

TEST_CASE("the Slurm requests round-trip and refuse what they cannot carry") {
  SlurmJobRequest begin{"begin", 12, 1000, "interactive", "high"};
  Result<SlurmJobRequest> back = SlurmJobRequest::Parse(begin.ToJson());
  REQUIRE(back.ok());
  CHECK(back->action == "begin");
  CHECK(back->job_id == 12);
  CHECK(back->uid == 1000);
  CHECK(back->partition == "interactive");
  CHECK(back->qos == "high");
  json bad = begin.ToJson();
  bad["action"] = "start";
  CHECK_FALSE(SlurmJobRequest::Parse(bad).ok());
  bad = begin.ToJson();
  bad["job_id"] = 0;
  CHECK_FALSE(SlurmJobRequest::Parse(bad).ok());
  bad = begin.ToJson();
  bad["qos"] = std::string(300, 'q');
  CHECK_FALSE(SlurmJobRequest::Parse(bad).ok());
  Result<SlurmStepRequest> step =
      SlurmStepRequest::Parse(SlurmStepRequest{"0,1", "train"}.ToJson());
  REQUIRE(step.ok());
  CHECK(step->gpus == "0,1");
  CHECK(step->name == "train");
  CHECK_FALSE(SlurmStepRequest::Parse(json{{"gpus", 0}, {"name", ""}}).ok());
}

// A job with every option off its default, as `submit` and `run` would send it.
JobRecord EveryOption() {
  JobRecord r;
  r.argv = {"python3", "train.py", "--lr", "3e-4"};
  r.name = "nightly";
  r.cwd = "/home/ana/work";
  r.priority = -5;
  r.quantum_ms = 5'000;
  r.gpu = "0,1";
  r.gpus = 2;
  r.time_limit_ms = 3'600'000;
  r.kill_after_ms = 10'000;
  r.dependency = "afterok:3";
  r.held = true;
  r.begin_time = 1'790'000'000.5;
  r.output = "%x-%j.out";
  r.memory = MemoryEngine::kCheckpoint;
  r.mail_user = "ana@example.org";
  r.mail_type = "END,FAIL";
  r.error = "%x-%j.err";
  r.open_append = true;
  r.warn_signal = SIGUSR1;
  r.warn_ms = 60'000;
  r.warn_main_only = true;
  return r;
}

TEST_CASE("Requests: run and submit carry every job option and read it back") {
  const JobRecord want = EveryOption();
  auto same_options = [&want](const JobRecord& got) {
    CHECK(got.argv == want.argv);
    CHECK(got.name == want.name);
    CHECK(got.cwd == want.cwd);
    CHECK(got.priority == want.priority);
    CHECK(got.quantum_ms == want.quantum_ms);
    CHECK(got.gpu == want.gpu);
    CHECK(got.gpus == want.gpus);
    CHECK(got.time_limit_ms == want.time_limit_ms);
    CHECK(got.kill_after_ms == want.kill_after_ms);
    CHECK(got.dependency == want.dependency);
    CHECK(got.held == want.held);
    CHECK(got.begin_time == want.begin_time);
    CHECK(got.output == want.output);
    CHECK(got.memory == want.memory);
    CHECK(got.mail_user == want.mail_user);
    CHECK(got.mail_type == want.mail_type);
    CHECK(got.error == want.error);
    CHECK(got.open_append == want.open_append);
    CHECK(got.warn_signal == want.warn_signal);
    CHECK(got.warn_ms == want.warn_ms);
    CHECK(got.warn_main_only == want.warn_main_only);
  };
  Result<RunRegisterRequest> run = RunRegisterRequest::Parse(RunRegisterRequest{want}.ToJson(), 2);
  REQUIRE(run.ok());
  same_options(run->job);
  CHECK_FALSE(run->job.mps_isolation);
  JobRecord isolated = want;
  isolated.mps_isolation = true;
  Result<RunRegisterRequest> iso =
      RunRegisterRequest::Parse(RunRegisterRequest{isolated}.ToJson(), 2);
  REQUIRE(iso.ok());
  CHECK(iso->job.mps_isolation);
  nlohmann::json bad = RunRegisterRequest{want}.ToJson();
  bad["mps_isolation"] = "yes";
  CHECK_FALSE(RunRegisterRequest::Parse(bad, 2).ok());

  SubmitRequest submit;
  submit.job = want;
  submit.env = {"HOME=/home/ana", "PATH=/usr/bin:/bin"};
  submit.script = "#!/bin/sh\npython3 train.py\n";
  submit.submit_key = "0123456789abcdef0123456789abcdef";
  submit.array = "0-9%2";
  Result<SubmitRequest> back = SubmitRequest::Parse(submit.ToJson(), 2);
  REQUIRE(back.ok());
  same_options(back->job);
  CHECK(back->env == submit.env);
  CHECK(back->script == submit.script);
  CHECK(back->submit_key == submit.submit_key);
  CHECK(back->array == submit.array);
  // A job on GPUs the daemon does not have is refused as the CLI would.
  CHECK_FALSE(SubmitRequest::Parse(submit.ToJson(), 1).ok());
}

TEST_CASE("Requests: a submission's own fields are checked by name") {
  SubmitRequest ok;
  ok.job = EveryOption();
  ok.job.gpu = "";
  ok.job.gpus = 1;
  ok.env = {"HOME=/"};
  auto with = [&ok](const char* key, const json& v) {
    json j = ok.ToJson();
    j[key] = v;
    return SubmitRequest::Parse(j, 0);
  };
  CHECK(with("script", nullptr).ok());
  CHECK(with("array", nullptr).ok());
  CHECK(with("env", {"A=1", 2}).status().message() ==
        "bad submission: \"env\" must be a list of strings");
  CHECK(with("script", 3).status().message() == "bad submission: \"script\" must be a string");
  CHECK(with("array", 7).status().message() == "bad submission: \"array\" must be a string");
  CHECK(with("submit_key", std::string(kMaxSubmitKey + 1, 'a')).status().message() ==
        "submit_key is too long");
  json no_env = ok.ToJson();
  no_env.erase("env");
  CHECK_FALSE(SubmitRequest::Parse(no_env, 0).ok());
  CHECK(with("priority", "high").status().message().rfind("bad job options: \"priority\"", 0) == 0);
}

}  // namespace
}  // namespace gshare::unit_requests
