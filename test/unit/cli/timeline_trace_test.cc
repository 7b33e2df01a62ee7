// Issue 24: `gshare timeline` pairs grants with releases into lease holds per GPU and job, and
// writes them as a Chrome trace (X spans, instant marks, named tracks) or an SVG drawing.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cli/timeline_model.h"
#include "cli/timeline_svg.h"
#include "cli/timeline_trace.h"

namespace gshare::unit_timeline_trace {
namespace {

using json = nlohmann::json;

TimelineEvent Ev(int64_t t, TimelineKind kind, int64_t job, std::string gpu = "GPU-a",
                 std::string detail = "") {
  TimelineEvent e;
  e.time_us = t;
  e.kind = kind;
  e.job = job;
  e.gpu = std::move(gpu);
  e.detail = std::move(detail);
  e.uid = 1000;
  e.job_name = job == 1 ? "train" : "";
  return e;
}

std::string User(uint32_t uid) { return "u" + std::to_string(uid); }

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_CASE("grants and releases pair into holds per GPU and job") {
  std::vector<TimelineEvent> events = {
      Ev(150, TimelineKind::kRelease, 3, "GPU-a", "idle"),  // granted before the window
      Ev(200, TimelineKind::kGrant, 1, "GPU-a", "exclusive"),
      Ev(250, TimelineKind::kSwapIn, 1),
      Ev(300, TimelineKind::kDrop, 1),
      Ev(310, TimelineKind::kRelease, 1, "GPU-a", "dropped"),
      Ev(320, TimelineKind::kGrant, 2, "GPU-a", "exclusive"),
      Ev(330, TimelineKind::kGrant, 2, "GPU-b", "shared"),  // still held at the window's end
      Ev(340, TimelineKind::kJobStart, 1, ""),
  };
  Timeline t = BuildTimeline(events, 100, 1000);
  CHECK(t.gpus == std::vector<std::string>{"GPU-a", "GPU-b"});
  REQUIRE(t.spans.size() == 4);
  CHECK((t.spans[0].job == 3 && t.spans[0].start_us == 100 && t.spans[0].end_us == 150));
  CHECK(t.spans[0].released == "idle");
  CHECK((t.spans[1].job == 1 && t.spans[1].start_us == 200 && t.spans[1].end_us == 310));
  CHECK((t.spans[1].mode == "exclusive" && t.spans[1].released == "dropped"));
  CHECK((t.spans[2].job == 2 && t.spans[2].gpu == "GPU-a" && t.spans[2].end_us == 1000));
  CHECK(t.spans[2].released.empty());
  CHECK((t.spans[3].gpu == "GPU-b" && t.spans[3].mode == "shared"));
  CHECK(t.marks.size() == 3);  // swap_in, drop, job_start
  CHECK(TimelineJobLabel(t, 1) == "job 1 (train)");
  CHECK(TimelineJobLabel(t, 2) == "job 2");

  // A daemon that died: its holds end where the next one started.
  Timeline crashed = BuildTimeline(
      {Ev(200, TimelineKind::kGrant, 1), Ev(500, TimelineKind::kDaemonStart, 0, "")}, 0, 1000);
  REQUIRE(crashed.spans.size() == 1);
  CHECK(crashed.spans[0].end_us == 500);
  CHECK(crashed.spans[0].released == "daemon restarted");
}

TEST_CASE("waits pair into spans as holds do, and a job start's pending time is its queue wait") {
  TimelineEvent start = Ev(400, TimelineKind::kJobStart, 2, "");
  start.ms = 0.3;  // pending 300 us
  Timeline t =
      BuildTimeline({Ev(150, TimelineKind::kWaited, 3, "GPU-a", "granted"),
                     Ev(200, TimelineKind::kWait, 1), start, Ev(450, TimelineKind::kWait, 2),
                     Ev(500, TimelineKind::kWaited, 1, "GPU-a", "granted")},
                    100, 1000);
  REQUIRE(t.waits.size() == 3);
  CHECK((t.waits[0].job == 3 && t.waits[0].start_us == 100 && t.waits[0].end_us == 150));
  CHECK((t.waits[1].job == 1 && t.waits[1].start_us == 200 && t.waits[1].end_us == 500 &&
         t.waits[1].released == "granted"));
  CHECK((t.waits[2].job == 2 && t.waits[2].end_us == 1000 && t.waits[2].released.empty()));
  REQUIRE(t.queued.size() == 1);
  CHECK((t.queued[0].job == 2 && t.queued[0].start_us == 100 && t.queued[0].end_us == 400));
  CHECK(t.marks.size() == 1);  // the start; waits are no marks
  CHECK(t.spans.empty());
}

TEST_CASE("ClipTimeline keeps what goes on past the cut, from the cut") {
  Timeline t = BuildTimeline(
      {Ev(100, TimelineKind::kGrant, 1), Ev(200, TimelineKind::kDrop, 1),
       Ev(300, TimelineKind::kRelease, 1, "GPU-a", "dropped"), Ev(350, TimelineKind::kWait, 2),
       Ev(400, TimelineKind::kGrant, 3), Ev(600, TimelineKind::kWaited, 2, "GPU-a", "granted"),
       Ev(700, TimelineKind::kDrop, 3)},
      0, 1000);
  ClipTimeline(&t, 500);
  CHECK(t.since_us == 500);
  REQUIRE(t.spans.size() == 1);  // job 1's hold ended before the cut
  CHECK((t.spans[0].job == 3 && t.spans[0].start_us == 500 && t.spans[0].end_us == 1000));
  REQUIRE(t.waits.size() == 1);
  CHECK((t.waits[0].job == 2 && t.waits[0].start_us == 500 && t.waits[0].end_us == 600));
  REQUIRE(t.marks.size() == 1);
  CHECK(t.marks[0].time_us == 700);
}

TEST_CASE("the Chrome trace names GPU tracks and job threads, holds are X events") {
  std::vector<TimelineEvent> events = {
      Ev(200, TimelineKind::kGrant, 1, "GPU-a", "exclusive"),
      Ev(250, TimelineKind::kSwapOut, 2),
      Ev(310, TimelineKind::kRelease, 1, "GPU-a", "dropped"),
      Ev(320, TimelineKind::kGrant, 2, "GPU-a", "exclusive"),
      Ev(900, TimelineKind::kRelease, 2, "GPU-a", "exit"),
  };
  events[1].bytes = 1 << 20;
  events[0].pid = 4242;
  const json trace = TimelineTrace(BuildTimeline(events, 0, 1000), User);
  // Round trip through text: what a viewer parses.
  const json doc = json::parse(trace.dump());
  REQUIRE(doc["traceEvents"].is_array());
  std::vector<json> holds, instants;
  std::map<std::string, int> process_names;
  std::map<int64_t, std::string> thread_names;
  for (const json& e : doc["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "M" && e["name"] == "process_name") process_names[e["args"]["name"]] = e["pid"];
    if (ph == "M" && e["name"] == "thread_name") thread_names[e["tid"]] = e["args"]["name"];
    if (ph == "X") holds.push_back(e);
    if (ph == "i") instants.push_back(e);
  }
  REQUIRE(process_names.count("GPU GPU-a") == 1);
  const int gpu_pid = process_names["GPU GPU-a"];
  CHECK(gpu_pid != 0);
  CHECK(thread_names[1] == "job 1 (train)");
  CHECK(thread_names[2] == "job 2");
  REQUIRE(holds.size() == 2);
  CHECK((holds[0]["ts"] == 200 && holds[0]["dur"] == 110 && holds[0]["tid"] == 1));
  CHECK(holds[0]["pid"] == gpu_pid);
  CHECK(holds[0]["args"]["process"] == 4242);
  CHECK(holds[0]["args"]["released"] == "dropped");
  CHECK(holds[0]["args"]["user"] == "u1000");
  CHECK((holds[1]["ts"] == 320 && holds[1]["dur"] == 580 && holds[1]["tid"] == 2));
  REQUIRE(instants.size() == 1);
  CHECK(instants[0]["name"] == "swap_out");
  CHECK(instants[0]["args"]["bytes"] == (1 << 20));
  CHECK(instants[0]["s"] == "t");
  // Holds on one GPU never overlap when each ended before the next began.
  CHECK(holds[0]["ts"].get<int64_t>() + holds[0]["dur"].get<int64_t>() <=
        holds[1]["ts"].get<int64_t>());
}

TEST_CASE("the SVG draws a rect per hold and escapes what job names carry") {
  std::vector<TimelineEvent> events = {
      Ev(1'000'000, TimelineKind::kGrant, 7, "GPU-a", "exclusive"),
      Ev(3'000'000, TimelineKind::kRelease, 7, "GPU-a", "idle"),
      Ev(4'000'000, TimelineKind::kGrant, 8, "GPU-a", "exclusive"),
      Ev(5'000'000, TimelineKind::kCheckpoint, 8),
      Ev(6'000'000, TimelineKind::kRelease, 8, "GPU-a", "exit"),
  };
  events[0].job_name = "a<b>&\"c\x1b[31m\xff";
  const std::string svg = TimelineSvg(BuildTimeline(events, 0, 7'000'000));
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(Count(svg, "<rect class=\"lease\"") == 2);
  CHECK(Count(svg, "data-job=\"7\"") == 1);
  CHECK(Count(svg, "class=\"mark checkpoint\"") == 1);
  CHECK(svg.find("a&lt;b&gt;&amp;&quot;c\\e[31m\xef\xbf\xbd") != std::string::npos);
  CHECK(svg.find('\x1b') == std::string::npos);
  CHECK(svg.find("</svg>") != std::string::npos);
  // Job 7's hold lies left of job 8's: x grows with time.
  auto x_of = [&svg](const std::string& job) {
    size_t at = svg.find("data-job=\"" + job + "\"");
    size_t x = svg.find(" x=\"", at);
    return std::stod(svg.substr(x + 4));
  };
  CHECK(x_of("7") < x_of("8"));
}

}  // namespace
}  // namespace gshare::unit_timeline_trace
