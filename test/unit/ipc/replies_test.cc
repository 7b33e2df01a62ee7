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

}  // namespace
}  // namespace gshare::unit_replies
