// Issue 24: `gshare acct`'s fields (sacct's names, widths, '+' on a cut cell, -p/-P lines,
// ExitCode's code:signal, durations and sizes) and `gshare status ID`'s readable block.
#include <stdlib.h>
#include <time.h>

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli/acct_format.h"
#include "cli/job_status_text.h"
#include "ipc/job_json.h"

namespace gshare::unit_acct_format {
namespace {

class UtcZone {
 public:
  UtcZone() {
    if (const char* old = getenv("TZ")) old_ = old;
    setenv("TZ", "UTC", 1);
    tzset();
  }
  ~UtcZone() {
    if (old_.empty())
      unsetenv("TZ");
    else
      setenv("TZ", old_.c_str(), 1);
    tzset();
  }

 private:
  std::string old_;
};

JobRun Run() {
  JobRun run;
  JobRecord& r = run.job;
  r.id = 42;
  r.name = "resnet50-imagenet-lr0.001-wd1e-4";
  r.uid = 1000;
  r.state = JobState::kFailed;
  r.submit_time = 1710498600;  // 2024-03-15 10:30:00 UTC
  r.start_time = 1710498600 + 65;
  r.end_time = 1710498600 + 65 + 3723;
  r.exit_code = 3;
  r.lease_seconds = 3600.4;
  r.wait_seconds = 12;
  r.peak_bytes = 3ull << 29;  // 1.5 GiB
  r.swaps_out = 4;
  r.swaps_in = 3;
  r.restarts = 1;
  r.slot = "0";
  return run;
}

AcctContext Context() {
  return AcctContext{1710498600 + 10000, [](uint32_t uid) {
                       return uid == 1000 ? std::string("alice") : std::to_string(uid);
                     }};
}

TEST_CASE("Issue 24: acct's fields are sacct's names in any case, with %N widths") {
  Result<std::vector<AcctField>> f = ParseAcctFormat("jobid,JOBNAME%30,Planned,run,GPUTime");
  REQUIRE(f.ok());
  REQUIRE(f->size() == 5);
  CHECK((*f)[0].name == "JobID");
  CHECK((*f)[1].name == "JobName");
  CHECK((*f)[1].width == 30);
  CHECK((*f)[2].name == "Reserved");
  CHECK((*f)[3].name == "Restarts");
  CHECK((*f)[4].width == 10);
  for (const char* bad :
       {"", "JobID,", "JobID,Bogus", "JobName%", "JobName%0", "JobName%x", "JobName%12345"}) {
    Result<std::vector<AcctField>> r = ParseAcctFormat(bad);
    CHECK_MESSAGE(!r.ok(), bad);
    if (!r.ok()) CHECK(r.status().message().find('\n') == std::string::npos);
  }
  std::string unknown = ParseAcctFormat("JobID,Bogus").status().message();
  CHECK(unknown.find("\"Bogus\"") != std::string::npos);
  CHECK(unknown.find("GPUTime") != std::string::npos);  // lists the known ones
}

TEST_CASE("Issue 24: acct's values: times, durations, sizes, ExitCode, swaps") {
  UtcZone utc;
  JobRun run = Run();
  Result<std::vector<AcctField>> f = ParseAcctFormat(
      "JobID,User,State,Submit,Start,End,Elapsed,Reserved,ExitCode,Restarts,GPUTime,LeaseWait,"
      "PeakMem,Swaps,GPU");
  REQUIRE(f.ok());
  CHECK(AcctLine(*f, run, Context(), AcctStyle::kParsable2) ==
        "42|alice|FAILED|2024-03-15T10:30:00|2024-03-15T10:31:05|2024-03-15T11:33:08|01:02:03|"
        "00:01:05|3:0|1|01:00:00|00:00:12|1.50G|4/3|0\n");
  run.requeued = true;
  run.job.state = JobState::kCancelled;
  run.job.exit_code.reset();
  run.job.signal = 15;
  run.job.end_time.reset();  // as if still running: elapsed counts to now
  run.job.peak_bytes = 0;
  CHECK(AcctLine(*f, run, Context(), AcctStyle::kParsable) ==
        "42|alice|REQUEUED|2024-03-15T10:30:00|2024-03-15T10:31:05|Unknown|02:45:35|00:01:05|"
        "0:15|1|01:00:00|00:00:12|0|4/3|0|\n");
  // A pending job: no start, its wait counts to now.
  JobRun pending = Run();
  pending.job.state = JobState::kPending;
  pending.job.start_time.reset();
  pending.job.end_time.reset();
  pending.job.exit_code.reset();
  CHECK(RunReserved(pending.job, 1710498600 + 90000) == 90000);
  CHECK(AcctDuration(90061) == "1-01:01:01");
  CHECK(AcctDuration(-5) == "00:00:00");
  CHECK(AcctBytes(512 << 10) == "512K");
  CHECK(AcctBytes(100) == "100B");
  CHECK(AcctBytes(5ull << 40) == "5T");
}

TEST_CASE("Issue 24: acct's table pads, cuts with '+', and heads with dashes") {
  UtcZone utc;
  Result<std::vector<AcctField>> f = ParseAcctFormat("JobID,JobName%10,State");
  REQUIRE(f.ok());
  CHECK(AcctHeader(*f, AcctStyle::kTable) ==
        "JobID    JobName    State\n"
        "-------- ---------- ----------\n");
  CHECK(AcctLine(*f, Run(), Context(), AcctStyle::kTable) == "42       resnet50-+ FAILED\n");
  CHECK(AcctHeader(*f, AcctStyle::kParsable2) == "JobID|JobName|State\n");
  JobRun utf = Run();
  utf.job.name = "ééééééé";  // seven characters of two bytes: padded by characters
  CHECK(AcctLine(*f, utf, Context(), AcctStyle::kTable) == "42       ééééééé    FAILED\n");
  utf.job.name = "éééééééééééé";  // twelve: cut on a character's edge
  CHECK(AcctLine(*f, utf, Context(), AcctStyle::kTable) == "42       ééééééééé+ FAILED\n");
}

TEST_CASE("Issue 24: acct --json has each run's times, usage and exit") {
  JobRun run = Run();
  run.job.array_job_id = 40;
  run.job.array_task_id = 2;
  nlohmann::json j = AcctJson(run, Context());
  CHECK(j["job_id"] == 42);
  CHECK(j["restarts"] == 1);
  CHECK(j["user"] == "alice");
  CHECK(j["state"] == "FAILED");
  CHECK(j["exit"] == "3:0");
  CHECK(j["exit_code"] == 3);
  CHECK(j["signal"].is_null());
  CHECK(j["elapsed_seconds"] == 3723.0);
  CHECK(j["reserved_seconds"] == 65.0);
  CHECK(j["gpu_seconds"] == 3600.4);
  CHECK(j["peak_bytes"] == 3ull << 29);
  CHECK(j["swaps_out"] == 4);
  CHECK(j["array_task_id"] == 2);
  CHECK(AcctJson(Run(), Context())["array_job_id"].is_null());
}

TEST_CASE("Issue 24: status ID is a readable block with the output expanded") {
  UtcZone utc;
  JobRecord r = Run().job;
  r.argv = {"python3", "train.py", "--name", "a b"};
  r.cwd = "/home/alice";
  r.output = "/home/alice/logs/%x-%j.out";
  r.time_limit_ms = 2 * 3600 * 1000;
  r.kind = JobKind::kSubmit;
  nlohmann::json j = JobToJson(r);
  const std::string text =
      JobStatusText(j, r.end_time.value() + 5, [](uint32_t) { return std::string("alice"); });
  CHECK(text.starts_with("JobId=42 JobName=resnet50-imagenet-lr0.001-wd1e-4\n"));
  CHECK(text.find("UserId=alice(1000)") != std::string::npos);
  CHECK(text.find("JobState=FAILED Reason=None ExitCode=3:0 Restarts=1") != std::string::npos);
  CHECK(text.find("SubmitTime=2024-03-15T10:30:00 StartTime=2024-03-15T10:31:05 "
                  "EndTime=2024-03-15T11:33:08") != std::string::npos);
  CHECK(text.find("RunTime=1h02m Waited=1m05s TimeLimit=2h") != std::string::npos);
  CHECK(text.find("Command=python3 train.py --name 'a b'\n") != std::string::npos);
  CHECK(text.find("StdOut=/home/alice/logs/resnet50-imagenet-lr0.001-wd1e-4-42.out\n") !=
        std::string::npos);
  CHECK(text.find("GPUTime=1h LeaseWait=12s PeakMem=1.5GiB Swaps=4/3") != std::string::npos);
  CHECK(text.find("%") == std::string::npos);
  // Another user's job under the system daemon: no command, directory or output.
  j["hidden"] = true;
  j["argv"] = nlohmann::json::array();
  const std::string hidden = JobStatusText(j, 0, [](uint32_t) { return std::string("alice"); });
  CHECK(hidden.find("Command=") == std::string::npos);
  CHECK(hidden.find("StdOut=") == std::string::npos);
  CHECK(JobStatusText(nlohmann::json::object(), 0, [](uint32_t) { return std::string(); }).empty());
}

}  // namespace
}  // namespace gshare::unit_acct_format
