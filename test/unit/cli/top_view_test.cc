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
  for (const char* want : {"87%", "40.0/80.0", "54C", "412W", "exclusive", "3 4s", " 5"}) {
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

// The header line of the job table.
const TopLine* JobHeader(const TopFrame& f) { return LineOf(f, "JOB "); }

TEST_CASE("top: the job table keeps the columns the width has room for, REASON always") {
  json st = Status();
  st["jobs"][1]["reason"] = "Dependency";
  for (int width : {80, 120, 200}) {
    CAPTURE(width);
    TopInput in = Input(st);
    in.width = width;
    TopFrame f = RenderTop(in);
    const TopLine* header = JobHeader(f);
    REQUIRE(header != nullptr);
    for (const char* always : {"JOB", "ST", "NAME", "REASON"})
      CHECK(header->text.find(always) != std::string::npos);
    // Lines are cut to the width; nothing of these may be lost to the cut.
    const TopLine* gpu_header = LineOf(f, "GPU ");
    REQUIRE(gpu_header != nullptr);
    CHECK(gpu_header->text.find("WAITERS") != std::string::npos);
    CHECK(header->text.find("COMMAND") != std::string::npos);
    bool keys = false;
    for (const TopLine& l : f.lines) keys |= l.text.find("? help") != std::string::npos;
    CHECK(keys);
    const TopLine* pending = LineOf(f, "5 ");
    REQUIRE(pending != nullptr);
    CHECK(pending->text.find("Dependency") != std::string::npos);
    CHECK(pending->text.find("next") != std::string::npos);
  }
  TopInput narrow = Input(st);
  narrow.width = 80;
  const std::string at80 = JobHeader(RenderTop(narrow))->text;
  CHECK(at80.find("SWAPS") == std::string::npos);   // dropped first
  CHECK(at80.find("ON-GPU") != std::string::npos);  // kept at 80
  CHECK(at80.find("PRI") != std::string::npos);
  const std::string at200 = JobHeader(RenderTop(Input(st)))->text;
  for (const char* all :
       {"USER", "LEASE", "WAITED", "RESIDENT", "SWAPPED", "SWAPS", "GPU", "COMMAND"})
    CHECK(at200.find(all) != std::string::npos);
}

TEST_CASE("top: an ended job shows no lease; a running one waiting for memory says so") {
  json st = Status();
  st["jobs"][0]["lease"] = "held";  // a stale value on an ended job
  st["jobs"][2]["memory"] = {{"allocated", 1}, {"resident", 0}, {"waiting_for", "GpuMemory"}};
  TopFrame f = RenderTop(Input(st));
  const TopLine* ended = LineOf(f, "1 ");
  REQUIRE(ended != nullptr);
  CHECK(ended->text.find("held") == std::string::npos);
  const TopLine* running = LineOf(f, "3 ");
  REQUIRE(running != nullptr);
  CHECK(running->text.find("GpuMemory") != std::string::npos);
  // One whose process waits at its first CUDA call for room to join its GPU's MPS server.
  st["daemon"]["mps"] = {{"gpus", json::array()}, {"arriving", {{{"job", 3}, {"why", "x"}}}}};
  const TopFrame waits = RenderTop(Input(st));
  running = LineOf(waits, "3 ");
  REQUIRE(running != nullptr);
  CHECK(running->text.find("MpsRoom") != std::string::npos);
}

TEST_CASE("top: o's orders put the highest first; the title names the order") {
  json st = Status();
  st["jobs"][3]["priority"] = 9;           // job 7, ended
  st["jobs"][0]["lease_seconds"] = 500.0;  // job 1, ended
  TopInput in = Input(st);
  in.sort = TopSort::kPriority;
  TopFrame f = RenderTop(in);
  REQUIRE_FALSE(f.jobs.empty());
  CHECK(f.jobs.front() == 7);
  CHECK(f.lines.front().text.find("sorted by priority") != std::string::npos);
  in.sort = TopSort::kGpuTime;
  CHECK(RenderTop(in).jobs.front() == 1);
  in.sort = TopSort::kId;
  CHECK(RenderTop(in).jobs == std::vector<int64_t>{7, 5, 3, 1});
  in.sort = TopSort::kState;
  CHECK(RenderTop(in).jobs == std::vector<int64_t>{3, 5, 1, 7});
  CHECK(RenderTop(in).lines.front().text.find("sorted") == std::string::npos);
}

TEST_CASE("top: ? shows the help page instead of the jobs; the selection stays") {
  json st = Status();
  TopInput in = Input(st);
  in.selected_job = 5;
  in.help = true;
  TopFrame f = RenderTop(in);
  CHECK(JobHeader(f) == nullptr);
  CHECK(LineOf(f, "Keys") != nullptr);
  CHECK(LineOf(f, "  o ") != nullptr);
  CHECK(f.selected_job == 5);
  bool keys_line = false;
  for (const TopLine& l : f.lines) keys_line |= l.text.find("? help") != std::string::npos;
  CHECK(keys_line);
}

}  // namespace
}  // namespace gshare::unit_top_view
