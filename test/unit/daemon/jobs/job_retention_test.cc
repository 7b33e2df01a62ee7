// JobRetention against a real SQLite store and BatchQueue in a scratch directory and a manual
// clock: which ended jobs go, which files go with them, when [retention] runs, and the clean
// request's reply.
#include "daemon/jobs/job_retention.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "daemon/job_records.h"
#include "daemon/jobs/clean_request_reply.h"
#include "temp_dir.h"

namespace gshare::unit_job_retention {
namespace {

namespace fs = std::filesystem;

struct RetentionFixture {
  TempDir dir;
  std::unique_ptr<JobStore> store;
  ManualClock clock;
  std::unique_ptr<BatchQueue> queue;
  std::unique_ptr<JobRetention> retention;

  explicit RetentionFixture(Config::Retention keep = {}) {
    store = OpenStoreOrFail(dir.path() + "/r.db");
    queue = std::make_unique<BatchQueue>(*store, clock,
                                         [](int64_t) { return std::optional<JobState>(); });
    fs::create_directories(dir.path() + "/logs");
    fs::create_directories(dir.path() + "/scripts");
    retention = std::make_unique<JobRetention>(
        *store, *queue, clock,
        JobRetention::Options{keep, "", [this](uint32_t) { return dir.path(); }});
  }

  // A job of `uid` that ended `ago_s` seconds ago, its output pattern `output`; its script
  // and its expanded output file are made.
  int64_t Ended(double ago_s, const std::string& output, uint32_t uid = 1000) {
    JobRecord r = SubmittedJob(JobState::kCompleted);
    r.uid = uid;
    r.submit_time = clock.WallNow() - ago_s - 1;
    r.end_time = clock.WallNow() - ago_s;
    r.output = output;
    auto id = store->Insert(r);
    REQUIRE(id.ok());
    std::ofstream(dir.path() + "/scripts/" + std::to_string(id.value())) << "#!/bin/sh\n";
    std::string file = output;
    if (auto at = file.find("%j"); at != std::string::npos) {
      file.replace(at, 2, std::to_string(id.value()));
    }
    if (!file.empty() && !fs::is_symlink(file)) std::ofstream(file) << "log\n";
    return id.value();
  }
  bool Stored(int64_t id) {
    auto row = store->Get(id);
    REQUIRE(row.ok());
    return row.value().has_value();
  }
  bool Exists(const std::string& rel) {
    return fs::exists(fs::symlink_status(dir.path() + "/" + rel));
  }
};

TEST_CASE("retention: jobs ended before the bound or past the newest go, with gshare's files") {
  Config::Retention keep;
  keep.ended_jobs = std::chrono::hours(1);
  keep.max_ended_jobs = 3;
  RetentionFixture f(keep);
  const std::string logs = f.dir.path() + "/logs/%j.out";
  const int64_t depended = f.Ended(7200, logs);  // old, but a pending job depends on it
  const int64_t old = f.Ended(7200, logs);
  fs::create_directories(f.dir.path() + "/mine");
  const int64_t own_file = f.Ended(10800, f.dir.path() + "/mine/%j.out");
  const int64_t fourth = f.Ended(600, logs);  // recent, but past the newest three
  const int64_t third = f.Ended(300, logs);
  const int64_t second = f.Ended(120, logs);
  const int64_t newest = f.Ended(60, logs);
  JobRecord pending = SubmittedJob(JobState::kPending);
  pending.dependency = "afterok:" + std::to_string(depended);
  auto pid = f.store->Insert(pending);
  REQUIRE(pid.ok());
  pending.id = pid.value();
  f.queue->Add(pending);

  CHECK(f.retention->Tick());
  CHECK(f.Stored(depended));
  CHECK(f.Stored(third));
  CHECK(f.Stored(second));
  CHECK(f.Stored(newest));
  for (int64_t gone : {old, own_file, fourth}) CHECK_FALSE(f.Stored(gone));
  // gshare's log and the script went; the user's own --output file stays.
  CHECK_FALSE(f.Exists("logs/" + std::to_string(old) + ".out"));
  CHECK_FALSE(f.Exists("scripts/" + std::to_string(old)));
  CHECK(f.Exists("mine/" + std::to_string(own_file) + ".out"));
  CHECK(f.Exists("logs/" + std::to_string(newest) + ".out"));
  CHECK(f.Exists("logs/" + std::to_string(depended) + ".out"));

  // Not again before its period.
  CHECK(f.retention->next() == f.clock.Now() + JobRetention::kPeriod);
  CHECK_FALSE(f.retention->Tick());
  f.clock.Advance(JobRetention::kPeriod);
  CHECK(f.retention->Tick());
}

TEST_CASE("retention: clean removes only the owner's jobs; a link in logs/ is not followed") {
  RetentionFixture f;
  const std::string target = f.dir.path() + "/target.txt";
  std::ofstream(target) << "keep me\n";
  const std::string link = f.dir.path() + "/logs/link.out";
  REQUIRE(symlink(target.c_str(), link.c_str()) == 0);
  const int64_t mine = f.Ended(60, link, 1000);
  const int64_t theirs = f.Ended(60, f.dir.path() + "/logs/%j.out", 2000);
  auto removed = f.retention->RemoveEnded(f.clock.WallNow(), SIZE_MAX, 1000u);
  REQUIRE(removed.ok());
  CHECK(removed.value() == std::vector<int64_t>{mine});
  CHECK(f.Stored(theirs));
  CHECK_FALSE(f.Exists("logs/link.out"));
  CHECK(fs::exists(target));
}

TEST_CASE("clean's reply: the ended jobs older than asked, only the owner's unless admin") {
  RetentionFixture f;
  const int64_t old_mine = f.Ended(3600, "", 1000);
  const int64_t new_mine = f.Ended(10, "", 1000);
  const int64_t old_theirs = f.Ended(3600, "", 2000);
  const double now = f.clock.WallNow();
  auto reply = [&](const nlohmann::json& req, std::optional<uint32_t> owner) {
    return nlohmann::json::parse(CleanRequestReply(*f.retention, req, now, owner));
  };
  CHECK(reply({{"older_than_ms", -1}}, 1000u)["ok"] == false);
  CHECK(reply({{"older_than_ms", 60000}}, 1000u)["removed"] == nlohmann::json{old_mine});
  CHECK(f.Stored(new_mine));
  CHECK(f.Stored(old_theirs));
  CHECK(reply(nlohmann::json::object(), std::nullopt)["removed"] ==
        nlohmann::json{new_mine, old_theirs});
}

}  // namespace
}  // namespace gshare::unit_job_retention
