#include "ipc/replies.h"

#include <doctest/doctest.h>

namespace gshare::unit_replies {
namespace {

using json = nlohmann::json;

TEST_CASE("Replies read back what the daemon sent") {
  Result<JobIdReply> id = JobIdReply::Parse(json::parse(JobIdReply{7, false}.ToJsonText()));
  REQUIRE(id.ok());
  CHECK(id->job_id == 7);
  CHECK_FALSE(id->admitted);
  CHECK_FALSE(id->existing);
  id = JobIdReply::Parse(json::parse(JobIdReply{8, true, true}.ToJsonText()));
  REQUIRE(id.ok());
  CHECK(id->admitted);
  CHECK(id->existing);
  id = JobIdReply::Parse(json::parse(JobIdReply{9, true, false, "t", "GPU-a,GPU-b"}.ToJsonText()));
  REQUIRE(id.ok());
  CHECK(id->visible == "GPU-a,GPU-b");
  CHECK(id->token == "t");
  CHECK_FALSE(JobIdReply::Parse(json{{"ok", true}, {"job_id", 7}, {"visible", 0}}).ok());

  JobControlReply control;
  control.results = {{3, ""}, {4, "job 4 is COMPLETED, not pending"}};
  Result<JobControlReply> back = JobControlReply::Parse(json::parse(control.ToJsonText()));
  REQUIRE(back.ok());
  REQUIRE(back->results.size() == 2);
  CHECK(back->results[0].id == 3);
  CHECK(back->results[0].error.empty());
  CHECK(back->results[1].error == "job 4 is COMPLETED, not pending");

  Result<CleanReply> clean = CleanReply::Parse(json::parse(CleanReply{{1, 2, 9}}.ToJsonText()));
  REQUIRE(clean.ok());
  CHECK(clean->removed == std::vector<int64_t>{1, 2, 9});
  Result<SchedulerReply> scheduler =
      SchedulerReply::Parse(json::parse(SchedulerReply{false}.ToJsonText()));
  REQUIRE(scheduler.ok());
  CHECK_FALSE(scheduler->enabled);
}

TEST_CASE("Replies refuse what a daemon should not send, without throwing") {
  Result<JobIdReply> refused = JobIdReply::Parse(json::parse(ErrorReply("no room")));
  CHECK_FALSE(refused.ok());
  CHECK(refused.status().message() == "no room");
  CHECK(JobIdReply::Parse(json{{"ok", true}}).status().message() ==
        "\"job_id\" must be an integer within [1, 9223372036854775807]");
  CHECK_FALSE(JobIdReply::Parse(json{{"ok", true}, {"job_id", "7"}}).ok());
  CHECK_FALSE(JobIdReply::Parse(json{{"ok", true}, {"job_id", 7}, {"admitted", 1}}).ok());
  CHECK_FALSE(JobIdReply::Parse(json::array()).ok());
  CHECK_FALSE(JobControlReply::Parse(json{{"ok", true}, {"results", 3}}).ok());
  CHECK_FALSE(JobControlReply::Parse(json{{"ok", true}, {"results", {json{{"ok", true}}}}}).ok());
  CHECK_FALSE(CleanReply::Parse(json{{"ok", true}, {"removed", {1, -2}}}).ok());
  CHECK_FALSE(CleanReply::Parse(json{{"ok", true}, {"removed", {1.5}}}).ok());
  CHECK_FALSE(SchedulerReply::Parse(json{{"ok", true}}).ok());
  CHECK(ReplyError(json{{"ok", false}}).message() == "failed");
  CHECK(ReplyError(json::parse(OkReply())).ok());
}

RunAttachReply SampleAttach() {
  RunAttachReply a;
  a.argv = {"/home/ana/.gshare/job.sh", "--epochs", "3"};
  a.env = {"HOME=/home/ana", "PATH=/usr/bin:/bin"};
  a.set_env = {{"GSHARE_JOB_ID", "12"}, {"LD_PRELOAD", "/opt/gshare/lib/libgshare.so"}};
  a.preload = {"/opt/gshare/lib/libgshare.so"};
  a.cwd = "/home/ana";
  a.output = "/home/ana/slurm-12.out";
  a.error = "/home/ana/slurm-12.err";
  a.open_append = true;
  a.warn_signal = 10;
  a.warn_ms = 60'000;
  a.warn_main_only = true;
  a.time_limit_ms = 3'600'000;
  a.kill_after_ms = 30'000;
  a.script = "#!/bin/sh\necho hi\n";
  a.script_path = "/var/lib/gshare/files/1000/scripts/12";
  a.end_path = "/var/lib/gshare/files/1000/ends/12";
  a.start_path = "/var/lib/gshare/files/1000/starts/12";
  return a;
}

TEST_CASE("The attach reply reads back every field the supervisor runs the job with") {
  const RunAttachReply a = SampleAttach();
  Result<RunAttachReply> back = RunAttachReply::Parse(json::parse(a.ToJsonText()));
  REQUIRE(back.ok());
  CHECK(back->argv == a.argv);
  CHECK(back->env == a.env);
  CHECK(back->set_env == a.set_env);  // in name order, as a JSON object holds them
  CHECK(back->preload == a.preload);
  CHECK(back->cwd == a.cwd);
  CHECK(back->output == a.output);
  CHECK(back->error == a.error);
  CHECK(back->open_append);
  CHECK(back->warn_signal == 10);
  CHECK(back->warn_ms == 60'000);
  CHECK(back->warn_main_only);
  CHECK(back->time_limit_ms == 3'600'000);
  CHECK(back->kill_after_ms == 30'000);
  CHECK(back->script == a.script);
  CHECK(back->script_path == a.script_path);
  CHECK(back->end_path == a.end_path);
  CHECK(back->start_path == a.start_path);
  RunAttachReply plain = a;
  plain.script.reset();
  plain.preload.clear();  // no libgshare.so: the job runs unshared
  back = RunAttachReply::Parse(json::parse(plain.ToJsonText()));
  REQUIRE(back.ok());
  CHECK_FALSE(back->script.has_value());
  CHECK(back->preload.empty());
}

TEST_CASE("The attach reply refuses a damaged description by field, without throwing") {
  const json good = json::parse(SampleAttach().ToJsonText());
  auto with = [&good](const char* key, const json& v) {
    json j = good;
    j[key] = v;
    return RunAttachReply::Parse(j);
  };
  CHECK(with("argv", json::array()).status().message() == "\"argv\" must not be empty");
  CHECK(with("argv", {"a", 1}).status().message() == "\"argv\" must be a list of strings");
  CHECK_FALSE(with("env", "HOME=/").ok());
  CHECK_FALSE(with("preload", nullptr).ok());
  CHECK_FALSE(with("cwd", 7).ok());
  CHECK_FALSE(with("open_append", 1).ok());
  CHECK(with("warn_signal", 65).status().message().find("\"warn_signal\"") == 0);
  CHECK_FALSE(with("time_limit_ms", -1).ok());
  CHECK_FALSE(with("kill_after_ms", 1.5).ok());
  CHECK_FALSE(with("set_env", {{"lower", "x"}}).ok());
  CHECK_FALSE(with("set_env", {{"OK", 1}}).ok());
  CHECK_FALSE(with("script", 3).ok());
  json missing = good;
  missing.erase("end_path");
  CHECK(RunAttachReply::Parse(missing).status().message() == "\"end_path\" must be a string");
  CHECK(RunAttachReply::Parse(json::parse(ErrorReply("job 3 is not waiting for its supervisor")))
            .status()
            .message() == "job 3 is not waiting for its supervisor");
}

}  // namespace
}  // namespace gshare::unit_replies
