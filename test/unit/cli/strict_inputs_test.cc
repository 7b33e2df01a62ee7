// Issue 19 (items 5, 6) and issue 27 (rows 9, 10): inputs are range-checked without overflow,
// priorities are decimal integers, --gpu names a GPU present, and the daemon's reading of job
// options checks every field's type and range.
#include <doctest/doctest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "base/begin_time.h"
#include "base/duration.h"
#include "base/gpu_inventory.h"
#include "ipc/job_json.h"
#include "cli/job_options.h"

namespace gshare::unit_strict_inputs {
namespace {

using json = nlohmann::json;

JobOptions ParseArgs(std::vector<std::string> args) {
  JobOptions opt;
  CLI::App app;
  AddJobOptions(app, &opt);
  std::reverse(args.begin(), args.end());
  app.parse(args);
  opt.MarkGiven();
  opt.options.clear();
  return opt;
}

Result<JobRecord> Resolve(std::vector<std::string> args, int gpus = 1) {
  Config config;
  config.queue.gpus = gpus;
  return ResolveJobOptions(ParseArgs(std::move(args)), {"true"}, config, 1.7e9);
}

json GoodOptions() {
  return json{{"name", "n"},        {"argv", {"true"}},       {"cwd", "/tmp"},
              {"priority", 0},      {"quantum_ms", 20000},    {"gpu", ""},
              {"time_limit_ms", 0}, {"kill_after_ms", 30000}, {"dependency", ""},
              {"held", false},      {"begin_time", nullptr},  {"output", ""},
              {"memory", "swap"}};
}

TEST_CASE("durations past 3650 days are errors, not overflows") {
  CHECK_FALSE(ParseDuration("200000d").ok());
  CHECK_FALSE(ParseDuration("3651d").ok());
  CHECK(ParseDuration("3650d").ok());
  CHECK_FALSE(ParseTimeLimit("200000d").ok());
  CHECK_FALSE(ParseTimeLimit("99999999").ok());  // minutes
  CHECK_FALSE(ParseTimeLimit("200000-00:00:00").ok());
  CHECK_FALSE(Resolve({"-t", "200000d"}).ok());
  CHECK_FALSE(Resolve({"--quantum", "200000d"}).ok());
  CHECK_FALSE(Resolve({"--kill-after", "200000d"}).ok());
  const double now = 1.7e9;
  CHECK_FALSE(ParseBeginTime("now+200000d", now).ok());
  CHECK_FALSE(ParseBeginTime("now+99999999weeks", now).ok());
  CHECK_FALSE(ParseBeginTime("@99999999999", now).ok());
  CHECK(ParseBeginTime("now+30days", now).ok());
  CHECK(ParseBeginTime("@1", now).ok());  // the past: start at once
}

TEST_CASE("priorities are decimal integers within [-1000, 1000]") {
  CHECK_FALSE(Resolve({"-p", ""}).ok());
  CHECK_FALSE(Resolve({"-p", "0x10"}).ok());
  CHECK_FALSE(Resolve({"-p", "1e2"}).ok());
  CHECK_FALSE(Resolve({"-p", "1001"}).ok());
  CHECK_FALSE(Resolve({"-p", "-99999999999999999999"}).ok());
  Result<JobRecord> r = Resolve({"-p", "-1000"});
  REQUIRE(r.ok());
  CHECK(r->priority == -1000);
  r = Resolve({"-p", "+16"});
  REQUIRE(r.ok());
  CHECK(r->priority == 16);
  CHECK(Resolve({"-p", "0x10"}).status().message().find("--priority") == 0);
}

TEST_CASE("--gpu is an index of a GPU present or a well-formed UUID") {
  CHECK(Resolve({"--gpu", "0"}).ok());
  CHECK_FALSE(Resolve({"--gpu", "5"}).ok());
  CHECK_FALSE(Resolve({"--gpu", "99"}).ok());
  CHECK_FALSE(Resolve({"--gpu", "-1"}).ok());
  CHECK_FALSE(Resolve({"--gpu", "GPU-nonsense"}).ok());
  CHECK(Resolve({"--gpu", "3"}, 4).ok());
  const std::string uuid = "GPU-0123abcd-4567-89ab-cdef-0123456789AB";
  CHECK(CheckGpuSpecAgainst(uuid, 1, std::nullopt).ok());  // no NVML: the form is enough
  CHECK(CheckGpuSpecAgainst(uuid, 1,
                            std::vector<std::string>{"GPU-0123abcd-4567-89ab-cdef-0123456789ab"})
            .ok());
  CHECK_FALSE(CheckGpuSpecAgainst(uuid, 1, std::vector<std::string>{}).ok());
  CHECK_FALSE(CheckGpuSpecAgainst("GPU-0123abcd-4567-89ab-cdef-0123456789a", 1, std::nullopt).ok());
  CHECK_FALSE(CheckGpuSpecAgainst("00", 4, std::nullopt).ok());
  CHECK_FALSE(CheckGpuSpecAgainst("0,1", 4, std::nullopt).ok());
  CHECK(CheckGpuSpecAgainst("", 1, std::nullopt).ok());
}

TEST_CASE("JobOptionsFromJson checks every field's type and range") {
  JobRecord r;
  REQUIRE(JobOptionsFromJson(GoodOptions(), &r).ok());
  auto refused = [](const char* key, json value) {
    json j = GoodOptions();
    j[key] = std::move(value);
    JobRecord rec;
    Status st = JobOptionsFromJson(j, &rec);
    CAPTURE(key);
    CAPTURE(j.dump());
    CHECK_FALSE(st.ok());
    CHECK(st.message().find('\n') == std::string::npos);
  };
  refused("priority", 1.5);
  refused("priority", "5");
  refused("priority", true);
  refused("priority", 5000);
  refused("quantum_ms", 0);
  refused("quantum_ms", 18446744073709551615ull);
  refused("quantum_ms", 20000.5);
  refused("time_limit_ms", int64_t{200000} * 86400 * 1000);
  refused("time_limit_ms", -1);
  refused("kill_after_ms", "30s");
  refused("held", "yes");
  refused("held", 1);
  refused("begin_time", 1e300);
  refused("begin_time", -1);
  refused("begin_time", "tomorrow");
  refused("argv", json::array());
  refused("argv", "true");
  refused("argv", json::array({"a", 1}));
  refused("argv", json{std::string("a\0b", 3)});
  refused("name", 7);
  refused("cwd", json::array());
  refused("cwd", "relative");
  refused("gpu", 0);
  refused("gpu", "GPU-nonsense");
  refused("gpu", "-1");
  refused("output", false);
  refused("memory", "fast");
  refused("dependency", 3);
  JobRecord rec;
  CHECK_FALSE(JobOptionsFromJson(json::array(), &rec).ok());
  CHECK_FALSE(JobOptionsFromJson(json("x"), &rec).ok());
  json missing = GoodOptions();
  missing.erase("priority");
  CHECK_FALSE(JobOptionsFromJson(missing, &rec).ok());
  // With the daemon's GPU count, an index must name one of them.
  json gpu = GoodOptions();
  gpu["gpu"] = "1";
  CHECK(JobOptionsFromJson(gpu, &rec).ok());
  CHECK_FALSE(JobOptionsFromJson(gpu, &rec, 1).ok());
  CHECK(JobOptionsFromJson(gpu, &rec, 2).ok());
}

}  // namespace
}  // namespace gshare::unit_strict_inputs
