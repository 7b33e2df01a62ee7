// Issue 24: `gshare top`'s frame (RenderTop): job order and selection, the GPUs of NVML and of
// the daemon merged, lines cut to the terminal's width.
#include "cli/top_view.h"

#include <doctest/doctest.h>

#include <string>

namespace gshare::unit_top_view {
namespace {

using json = nlohmann::json;

json Job(int64_t id, const char* state, const char* code, const char* name) {
  return {{"id", id},
          {"state", state},
          {"state_code", code},
          {"name", name},
          {"uid", 1000},
          {"priority", 0},
          {"argv", {"python3", "train.py"}},
          {"lease", "idle"},
          {"lease_seconds", 75.0},
          {"wait_seconds", 0.0}};
}

json Status() {
  json gpu0 = {{"uuid", "GPU-a"}, {"index", 0},          {"mode", "exclusive"},
               {"holder", 3},     {"held_seconds", 4.0}, {"waiters", {5}}};
  json gpu9 = {{"uuid", "GPU-z"},          {"index", 9},
               {"mode", "shared"},         {"holder", nullptr},
               {"waiters", json::array()}, {"capacity", 8ull << 30}};
  return {{"daemon", {{"mode", "user"}, {"pid", 42}, {"scheduler", "on"}}},
          {"gpus", {gpu0, gpu9}},
          {"jobs",
           {Job(1, "COMPLETED", "CD", "old"), Job(5, "PENDING", "PD", "next"),
            Job(3, "RUNNING", "R", "train"), Job(7, "FAILED", "F", "broken")}}};
}

TopInput Input(const json& status) {
  TopInput in;
  in.status = &status;
  GpuSample a;
  a.index = 0;
  a.uuid = "GPU-a";
  a.name = "NVIDIA H100 80GB HBM3";
  a.util_percent = 87;
  a.memory_total = 80ll << 30;
  a.memory_used = 40ll << 30;
  a.temperature_c = 54;
  a.power_mw = 412000;
  GpuSample b = a;
  b.index = 1;
  b.uuid = "GPU-b";  // NVML lists it; no job used it yet
  in.gpus = {a, b};
  in.user_name = [](uint32_t uid) { return uid == 1000 ? std::string("ada") : std::string("?"); };
  in.width = 200;
  return in;
}

// The line whose text starts with `prefix` (a job id or a GPU index and a space), or nullptr.
const TopLine* LineOf(const TopFrame& f, const std::string& prefix) {
  for (const TopLine& l : f.lines) {
    if (l.text.rfind(prefix, 0) == 0) return &l;
  }
  return nullptr;
}

TEST_CASE("top: running jobs first, then pending, then ended; the first is selected") {
  json st = Status();
  TopFrame f = RenderTop(Input(st));
  CHECK(f.jobs == std::vector<int64_t>{3, 5, 1, 7});
  CHECK(f.selected_job == 3);
  const TopLine* train = LineOf(f, "3      ");
  REQUIRE(train != nullptr);
  CHECK(train->style == TopLine::Style::kSelected);
  CHECK(train->text.find("ada") != std::string::npos);
  CHECK(train->text.find("1m15s") != std::string::npos);  // lease_seconds 75
  CHECK(train->text.find("python3 train.py") != std::string::npos);
  CHECK(LineOf(f, "5      ")->style == TopLine::Style::kPending);
  CHECK(LineOf(f, "1      ")->style == TopLine::Style::kEnded);
  CHECK(LineOf(f, "7      ")->style == TopLine::Style::kFailed);
  CHECK(f.lines.front().text.find("1 running, 1 pending") != std::string::npos);
}

TEST_CASE("top: the selection follows the job, and falls back to the first when it is gone") {
  json st = Status();
  TopInput in = Input(st);
  in.selected_job = 7;
  TopFrame f = RenderTop(in);
  CHECK(f.selected_job == 7);
  CHECK(LineOf(f, "7      ")->style == TopLine::Style::kSelected);
  CHECK(LineOf(f, "3      ")->style == TopLine::Style::kRunning);
  in.selected_job = 99;
  CHECK(RenderTop(in).selected_job == 3);
}

TEST_CASE("top: NVML's GPUs and the daemon's merged by UUID, idle ones too") {
  json st = Status();
  TopFrame f = RenderTop(Input(st));
  const TopLine* g0 = LineOf(f, "0   ");
  const TopLine* g1 = LineOf(f, "1   ");
  const TopLine* g9 = LineOf(f, "9   ");
  REQUIRE(g0 != nullptr);
  REQUIRE(g1 != nullptr);
  REQUIRE(g9 != nullptr);
  for (const char* want : {"87%", "40.0/80.0", "54C", "412W", "exclusive", "3 4.0s", " 5"}) {
    CHECK_MESSAGE(g0->text.find(want) != std::string::npos, want, " in ", g0->text);
  }
  CHECK(g1->text.find("idle") != std::string::npos);    // NVML only
  CHECK(g9->text.find("shared") != std::string::npos);  // the daemon only: its capacity
  CHECK(g9->text.find("-/8.0") != std::string::npos);
}

TEST_CASE("top: without a daemon or NVML it says so; lines fit the width") {
  TopInput in;
  in.message = "cannot reach the daemon";
  in.width = 30;
  TopFrame f = RenderTop(in);
  CHECK(f.jobs.empty());
  CHECK(f.selected_job == 0);
  CHECK(f.lines.front().text == "gshare top - no daemon");
  bool said = false;
  for (const TopLine& l : f.lines) {
    CHECK(l.text.size() <= 29);
    said = said || l.text.rfind("cannot reach", 0) == 0;
  }
  CHECK(said);
}

}  // namespace
}  // namespace gshare::unit_top_view
