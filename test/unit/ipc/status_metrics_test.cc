// Issue 24 (metrics): the status document as an exposition: every family typed before its
// samples, counters named _total, per-job series for live jobs only, user input escaped.
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "ipc/status_metrics.h"

namespace gshare::unit_status_metrics {
namespace {

using json = nlohmann::json;

json Document() {
  json gpu{{"uuid", "GPU-abc"},
           {"index", 0},
           {"ordinal", 0},
           {"mode", "exclusive"},
           {"holding", {7}},
           {"waiters", {8}},
           {"lease_seconds_total", 12.5},
           {"wait_seconds_total", 3},
           {"swaps_out_total", 2},
           {"swaps_in_total", 1},
           {"bytes_out_total", 1 << 20},
           {"bytes_in_total", 1 << 19},
           {"used_bytes", 1000},
           {"capacity", 4000},
           {"mode_switches", 1},
           {"drains", 4}};
  json mem{
      {"allocated", 100}, {"resident", 60}, {"swapped", 40}, {"bytes_out", 40}, {"bytes_in", 0}};
  json running{{"id", 7},
               {"name", "sweep \"a\"\\b\nc"},
               {"state", "RUNNING"},
               {"uid", 0},
               {"lease_seconds", 9.5},
               {"wait_seconds", 1.25},
               {"swaps_out", 1},
               {"swaps_in", 0},
               {"held_back_seconds", 0},
               {"peak_bytes", 100},
               {"memory", mem},
               {"argv", {"secret"}}};
  json ended = running;
  ended["id"] = 6;
  ended["state"] = "COMPLETED";
  return {{"ok", true},
          {"daemon",
           {{"version", "1.0"},
            {"mode", "user"},
            {"scheduler", "on"},
            {"queue", "running"},
            {"start_time", 1700000000.5},
            {"job_counts", {{"PENDING", 3}, {"RUNNING", 1}, {"SUSPENDED", 0}}}}},
          {"gpus", {gpu}},
          {"jobs", {running, ended}}};
}

// A small reader of text format 0.0.4: TYPE per family, samples as "name{labels} value".
struct Parsed {
  std::map<std::string, std::string> types;  // family -> gauge/counter
  std::map<std::string, double> samples;     // name{labels} as written -> value
  std::string error;
};

Parsed Parse(const std::string& text) {
  Parsed p;
  std::istringstream in(text);
  std::string line, family;
  std::set<std::string> helped;
  while (std::getline(in, line)) {
    if (line.rfind("# HELP ", 0) == 0) {
      family = line.substr(7, line.find(' ', 7) - 7);
      if (!helped.insert(family).second) p.error += "HELP twice: " + family + "\n";
    } else if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream f(line.substr(7));
      std::string name, type;
      f >> name >> type;
      if (name != family) p.error += "TYPE without HELP: " + name + "\n";
      p.types[name] = type;
    } else {
      const size_t brace = line.find('{');
      const size_t space = line.rfind(' ');
      const std::string name = line.substr(0, std::min(brace, line.find(' ')));
      if (name != family) p.error += "sample outside its family: " + line + "\n";
      if (p.types[family] == "counter" && name.size() > 6 &&
          name.substr(name.size() - 6) != "_total") {
        p.error += "counter without _total: " + name + "\n";
      }
      p.samples[line.substr(0, space)] = std::stod(line.substr(space + 1));
    }
  }
  return p;
}

}  // namespace

TEST_CASE("the status document as Prometheus metrics") {
  const std::string text = StatusMetrics(Document());
  const Parsed p = Parse(text);
  CHECK(p.error == "");
  CHECK(p.types.at("gshare_gpu_lease_seconds_total") == "counter");
  CHECK(p.types.at("gshare_queue_jobs") == "gauge");
  CHECK(p.samples.at("gshare_daemon_start_time_seconds") == doctest::Approx(1700000000.5));
  CHECK(p.samples.at("gshare_queue_jobs{state=\"PENDING\"}") == 3);
  CHECK(p.samples.at("gshare_queue_jobs{state=\"RUNNING\"}") == 1);
  CHECK(p.samples.at("gshare_queue_jobs{state=\"SUSPENDED\"}") == 0);
  const std::string gpu = "{gpu=\"0\",uuid=\"GPU-abc\"";
  CHECK(p.samples.at("gshare_gpu_lease_seconds_total" + gpu + "}") == 12.5);
  CHECK(p.samples.at("gshare_gpu_swap_bytes_total" + gpu + ",direction=\"out\"}") == 1 << 20);
  CHECK(p.samples.at("gshare_gpu_memory_bytes" + gpu + ",kind=\"used\"}") == 1000);
  CHECK(p.samples.at("gshare_gpu_lease_holders" + gpu + "}") == 1);
  CHECK(p.samples.at("gshare_gpu_exclusive" + gpu + "}") == 1);
  // The job's name is user input: escaped inside its label, one line per sample.
  const std::string job = "{job=\"7\",user=\"root\",name=\"sweep \\\"a\\\"\\\\b\\nc\"";
  CHECK(p.samples.at("gshare_job_lease_seconds_total" + job + "}") == 9.5);
  CHECK(p.samples.at("gshare_job_wait_seconds_total" + job + "}") == 1.25);
  CHECK(p.samples.at("gshare_job_swaps_total" + job + ",direction=\"out\"}") == 1);
  CHECK(p.samples.at("gshare_job_memory_bytes" + job + ",kind=\"swapped\"}") == 40);
  // Ended jobs have no series; commands are never written.
  CHECK(text.find("job=\"6\"") == std::string::npos);
  CHECK(text.find("secret") == std::string::npos);
}

TEST_CASE("a document without GPUs or jobs still types every family") {
  const Parsed p = Parse(StatusMetrics(json{{"ok", true}}));
  CHECK(p.error == "");
  CHECK(p.types.count("gshare_job_lease_seconds_total") == 1);
  CHECK(p.types.count("gshare_gpu_swaps_total") == 1);
  CHECK(p.samples.count("gshare_daemon_start_time_seconds") == 0);  // not invented
}

}  // namespace gshare::unit_status_metrics
