// TimelineReply: a user's own jobs' events (the recorder's buffered ones written first), every
// user's for an admin only, malformed requests refused; and the host budgets' bytes. Against a
// real store in a scratch directory.
#include "daemon/observe/timeline_reply.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <memory>
#include <set>
#include <utility>

#include "daemon/gpu/host_budget.h"
#include "ipc/timeline_request.h"
#include "daemon/job_records.h"
#include "temp_dir.h"

namespace gshare::unit_timeline_reply {
namespace {

using json = nlohmann::json;

struct Fixture {
  TempDir dir;
  std::unique_ptr<JobStore> store;
  ManualClock clock{0.0};
  TimelineRecorder recorder{TimelineRecorder::Options{}, clock,
                            [](JobId job) { return static_cast<uint32_t>(1000 + job); }};
  Fixture() { store = OpenStoreOrFail(dir.path() + "/t.db"); }
  // A request as `gshare timeline` sends it.
  static json Request(bool all_users, std::set<int64_t> jobs = {}) {
    TimelineRequest r;
    r.all_users = all_users;
    r.jobs = std::move(jobs);
    return r.ToJson();
  }
  json Ask(const json& req, uint32_t uid, bool admin) {
    return json::parse(TimelineReply(*store, recorder, req, uid, admin));
  }
};

TEST_CASE("a user sees their own jobs' events, an admin every user's") {
  Fixture f;
  f.recorder.Note(TimelineKind::kSwapOut, 1, "GPU-0", 100, 1 << 20);  // uid 1001
  f.recorder.Note(TimelineKind::kSwapOut, 2, "GPU-0", 200, 1 << 20);  // uid 1002
  REQUIRE(f.recorder.buffered() == 2);  // not written yet: the request writes them

  json own = f.Ask(Fixture::Request(false), 1001, false);
  CHECK(own["ok"] == true);
  CHECK(own["recording"] == true);
  REQUIRE(own["events"].size() == 1);
  CHECK(own["events"][0]["job"] == 1);
  CHECK(own["next_after"].is_null());

  json refused = f.Ask(Fixture::Request(true), 1001, false);
  CHECK(refused["ok"] == false);
  CHECK(refused["error"].get<std::string>().find("only an admin") != std::string::npos);

  json all = f.Ask(Fixture::Request(true), 0, true);
  CHECK(all["events"].size() == 2);
  json one_job = f.Ask(Fixture::Request(true, {2}), 0, true);
  REQUIRE(one_job["events"].size() == 1);
  CHECK(one_job["events"][0]["job"] == 2);

  json request = Fixture::Request(false);
  request["since_us"] = "yesterday";
  json bad = f.Ask(request, 1001, false);
  CHECK(bad["ok"] == false);
  CHECK(bad["error"].get<std::string>().rfind("bad timeline request", 0) == 0);
}

TEST_CASE("host budgets: bytes or a share of the RAM, half of it when unreadable") {
  const uint64_t ram = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                       static_cast<uint64_t>(sysconf(_SC_PAGE_SIZE));
  Config config;
  config.memory.host_budget = "25%";
  CHECK(HostBudgetBytes(config) == ram / 4);
  config.memory.host_budget = "2GiB";
  CHECK(HostBudgetBytes(config) == 2ull << 30);
  config.memory.host_budget = "lots";
  CHECK(HostBudgetBytes(config) == ram / 2);
  config.memory.host_budget_per_user = "";
  CHECK(UserHostBudgetBytes(config) == 0);
  config.memory.host_budget_per_user = "50%";
  CHECK(UserHostBudgetBytes(config) == ram / 2);
  config.memory.host_budget_per_user = "lots";
  CHECK(UserHostBudgetBytes(config) == 0);
}

}  // namespace
}  // namespace gshare::unit_timeline_reply
