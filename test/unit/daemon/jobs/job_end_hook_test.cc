// Issue 24 item 5: the environment of the [notify] command run when a job ends.
#include "daemon/jobs/job_end_hook.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>

namespace gshare::unit_job_end_hook {
namespace {

std::map<std::string, std::string> AsMap(const std::vector<std::string>& env) {
  std::map<std::string, std::string> m;
  for (const std::string& e : env) {
    size_t eq = e.find('=');
    REQUIRE(eq != std::string::npos);
    CHECK(m.count(e.substr(0, eq)) == 0);  // each variable once
    m[e.substr(0, eq)] = e.substr(eq + 1);
  }
  return m;
}

TEST_CASE("job end hook: the job's fields in GSHARE_JOB_* variables") {
  JobRecord r;
  r.id = 42;
  r.name = "sweep-lr0.01";
  r.state = JobState::kFailed;
  r.exit_code = 3;
  r.reason = "exit code 3";
  r.uid = 1001;
  r.argv = {"python3", "train.py", "--lr", "0.01"};
  r.cwd = "/home/ada/proj";
  r.output = "%x-%j.out";
  r.slot = "1";
  r.submit_time = 1000.0;
  r.start_time = 1010.0;
  r.end_time = 1070.5;
  r.mail_user = "ada@example.org";
  r.mail_type = "END,FAIL";
  auto env = AsMap(JobEndHookEnv(r, "ada", "/home/ada"));
  CHECK(env.at("GSHARE_JOB_ID") == "42");
  CHECK(env.at("GSHARE_JOB_NAME") == "sweep-lr0.01");
  CHECK(env.at("GSHARE_JOB_STATE") == "FAILED");
  CHECK(env.at("GSHARE_JOB_EXIT_CODE") == "3");
  CHECK(env.at("GSHARE_JOB_SIGNAL").empty());
  CHECK(env.at("GSHARE_JOB_REASON") == "exit code 3");
  CHECK(env.at("GSHARE_JOB_USER") == "ada");
  CHECK(env.at("GSHARE_JOB_UID") == "1001");
  CHECK(env.at("GSHARE_JOB_START_TIME") == "1010.000");
  CHECK(env.at("GSHARE_JOB_END_TIME") == "1070.500");
  CHECK(env.at("GSHARE_JOB_ELAPSED") == "60.500");
  CHECK(env.at("GSHARE_JOB_COMMAND") == "python3 train.py --lr 0.01");
  CHECK(env.at("GSHARE_JOB_CWD") == "/home/ada/proj");
  CHECK(env.at("GSHARE_JOB_OUTPUT") == "%x-%j.out");
  CHECK(env.at("GSHARE_JOB_GPU") == "1");
  CHECK(env.at("GSHARE_JOB_MAIL_USER") == "ada@example.org");
  CHECK(env.at("GSHARE_JOB_MAIL_TYPE") == "END,FAIL");
  CHECK(env.at("HOME") == "/home/ada");
  CHECK(env.at("USER") == "ada");
  CHECK(env.at("PATH") == "/usr/bin:/bin");
}

TEST_CASE("job end hook: a job cancelled before it started has no start or elapsed time") {
  JobRecord r;
  r.id = 7;
  r.state = JobState::kCancelled;
  r.signal = 15;
  r.end_time = 5.0;
  auto env = AsMap(JobEndHookEnv(r, "root", ""));
  CHECK(env.at("GSHARE_JOB_STATE") == "CANCELLED");
  CHECK(env.at("GSHARE_JOB_SIGNAL") == "15");
  CHECK(env.at("GSHARE_JOB_EXIT_CODE").empty());
  CHECK(env.at("GSHARE_JOB_START_TIME").empty());
  CHECK(env.at("GSHARE_JOB_ELAPSED").empty());
}

}  // namespace
}  // namespace gshare::unit_job_end_hook
