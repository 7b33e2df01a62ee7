#include "cli/timeline_svg.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <iterator>
#include <string_view>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>
#include <vector>

#include "base/terminal_text.h"
#include "base/byte_size.h"
#include "base/duration.h"
#include "cli/acct_format.h"

namespace gshare {
namespace {

// Layout, in SVG user units (pixels).
constexpr double kWidth = 1200;
constexpr double kLabelWidth = 280;  // the job and GPU names on the left
constexpr double kRightMargin = 24;
constexpr double kTop = 56;  // the title and the time axis
constexpr double kRow = 22;
constexpr double kBarInset = 3;  // a hold's rectangle leaves this much of its row free

// Text as XML character data or an attribute value: valid UTF-8 (invalid bytes become
// U+FFFD), control characters escaped visibly, markup escaped.
std::string SvgText(const std::string& text) {
  const std::string valid =
      nlohmann::json::parse(
          nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
          .get<std::string>();
  std::string out;
  for (char c : TerminalText(valid)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string SvgNum(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// A job's colour: hues spread by the golden angle, so neighbouring ids differ; light, so that
// the marks (dark, saturated) stand out on them. `wait`: the paler tone of its waits.
std::string JobColour(int64_t job, bool wait = false) {
  const int hue = static_cast<int>((job * 137) % 360);
  return "hsl(" + std::to_string(hue) + (wait ? ",55%,90%)" : ",55%,66%)");
}

constexpr const char* kQueueColour = "#e3e3e3";

const char* MarkColour(TimelineKind kind) {
  switch (kind) {
    case TimelineKind::kDrop: return "#c0392b";
    case TimelineKind::kSwapOut: return "#d35400";
    case TimelineKind::kSwapIn: return "#1e8449";
    case TimelineKind::kCheckpoint:
    case TimelineKind::kRestore: return "#7d3c98";
    case TimelineKind::kSuspend:
    case TimelineKind::kResume: return "#1f618d";
    case TimelineKind::kHandoff: return "#6e2c00";
    default: return "#222222";
  }
}

// The tick step, in ms: the first of these round clock steps that gives at most ten ticks.
int64_t TickStepMs(double span_s) {
  static constexpr int64_t kStepsS[] = {1,     2,     5,     10,    15,     30,    60,
                                        120,   300,   600,   900,   1800,   3600,  7200,
                                        10800, 21600, 43200, 86400, 172800, 604800};
  for (int64_t ms : {100, 200, 500}) {
    if (span_s * 1000 / static_cast<double>(ms) <= 10) return ms;
  }
  for (int64_t step : kStepsS) {
    if (span_s / static_cast<double>(step) <= 10) return step * 1000;
  }
  return kStepsS[std::size(kStepsS) - 1] * 1000;
}

// A tick's local clock time: "14:05:30.5" for steps under a second, "14:05:30" under a minute,
// "14:05" under a day, "12-01 14:00" for days (or when the picture spans days).
std::string TickLabel(int64_t unix_ms, int64_t step_ms, bool days) {
  const time_t t = static_cast<time_t>(unix_ms / 1000);
  struct tm local;
  localtime_r(&t, &local);
  char buf[32];
  std::strftime(buf, sizeof buf,
                days               ? "%m-%d %H:%M"
                : step_ms < 60'000 ? "%H:%M:%S"
                                   : "%H:%M",
                &local);
  std::string label = buf;
  if (step_ms < 1000 && !days) label += "." + std::to_string(unix_ms % 1000 / 100);
  return label;
}

// Seconds east of UTC where `unix_s` falls in local time, so that ticks are round local times.
int64_t LocalOffset(int64_t unix_s) {
  const time_t t = static_cast<time_t>(unix_s);
  struct tm local;
  localtime_r(&t, &local);
  return local.tm_gmtoff;
}

std::string SecondsText(int64_t us) { return FormatSeconds(static_cast<double>(us) / 1e6); }

// A GPU section's heading: its label from `labels` (index and model), else its UUID's start
// ("GPU-46414b45...").
std::string GpuHeading(const std::string& gpu, const std::map<std::string, std::string>& labels) {
  auto it = labels.find(gpu);
  if (it != labels.end()) return it->second;
  return gpu.size() > 12 ? gpu.substr(0, 12) + "..." : gpu;
}

std::string Rect(const char* cls, int64_t job, double x, double y, double w, double h,
                 const std::string& fill, const std::string& tip, const char* extra = "") {
  return "<rect class=\"" + std::string(cls) + "\" data-job=\"" + std::to_string(job) + "\" x=\"" +
         SvgNum(x) + "\" y=\"" + SvgNum(y) + "\" width=\"" + SvgNum(w) + "\" height=\"" +
         SvgNum(h) + "\" fill=\"" + fill + "\"" + extra + "><title>" + SvgText(tip) +
         "</title></rect>\n";
}

}  // namespace

std::string TimelineSvg(const Timeline& t, const std::map<std::string, std::string>& gpu_labels) {
  // Rows: a section per GPU, a row per job that held or waited for it or had an event on it.
  // What a job did on no GPU (its queue wait, start and end) goes on its first GPU row; a job
  // that never came near a GPU in the window is counted below the picture, not drawn.
  std::map<std::string, std::set<int64_t>> jobs_of;
  std::map<int64_t, std::string> first_gpu;
  auto place = [&](const std::string& gpu, int64_t job) {
    if (gpu.empty() || job == 0) return;
    jobs_of[gpu].insert(job);
    first_gpu.emplace(job, gpu);
  };
  for (const TimelineSpan& s : t.spans) place(s.gpu, s.job);
  for (const TimelineSpan& s : t.waits) place(s.gpu, s.job);
  for (const TimelineEvent& e : t.marks) place(e.gpu, e.job);
  auto row_gpu = [&](const std::string& gpu, int64_t job) -> const std::string* {
    if (!gpu.empty()) return &gpu;
    auto it = first_gpu.find(job);
    return it == first_gpu.end() ? nullptr : &it->second;
  };
  std::set<int64_t> no_gpu;
  for (const TimelineEvent& e : t.marks) {
    if (e.job != 0 && first_gpu.count(e.job) == 0) no_gpu.insert(e.job);
  }

  // The time drawn: from the first thing drawn to the last, inside the window.
  int64_t t0 = INT64_MAX, t1 = INT64_MIN;
  auto extend = [&](int64_t a, int64_t b) {
    t0 = std::min(t0, a);
    t1 = std::max(t1, b);
  };
  for (const auto* list : {&t.spans, &t.waits, &t.queued}) {
    for (const TimelineSpan& s : *list) {
      if (row_gpu(s.gpu, s.job) != nullptr) extend(s.start_us, s.end_us);
    }
  }
  for (const TimelineEvent& e : t.marks) {
    if (e.job == 0 || row_gpu(e.gpu, e.job) != nullptr) extend(e.time_us, e.time_us);
  }
  if (t0 > t1) t0 = t1 = t.since_us;
  t0 = std::max(t0, t.since_us);
  if (t1 <= t0) t1 = t0 + 1'000'000;
  const double plot = kWidth - kLabelWidth - kRightMargin;
  auto x = [&](int64_t us) {
    return kLabelWidth +
           static_cast<double>(std::clamp(us, t0, t1) - t0) / static_cast<double>(t1 - t0) * plot;
  };

  std::map<std::pair<std::string, int64_t>, double> row_y;  // (GPU, job) -> its row's top
  double y = kTop;
  std::string rows;
  for (const std::string& gpu : t.gpus) {
    if (jobs_of.count(gpu) == 0) continue;
    rows += "<rect class=\"section\" x=\"0\" y=\"" + SvgNum(y) + "\" width=\"" + SvgNum(kWidth) +
            "\" height=\"" + SvgNum(kRow) + "\" fill=\"#f2f2f2\"/>\n";
    rows += "<text x=\"6\" y=\"" + SvgNum(y + kRow - 7) + "\" font-weight=\"bold\">" +
            SvgText(GpuHeading(gpu, gpu_labels)) + "<title>" + SvgText(gpu) + "</title></text>\n";
    y += kRow;
    for (int64_t job : jobs_of[gpu]) {
      row_y[{gpu, job}] = y;
      rows += "<text x=\"14\" y=\"" + SvgNum(y + kRow - 7) + "\">" +
              SvgText(TimelineJobLabel(t, job)) + "</text>\n";
      y += kRow;
    }
  }
  const double height = y + 70;

  std::string out =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
      SvgNum(kWidth) + "\" height=\"" + SvgNum(height) + "\" viewBox=\"0 0 " + SvgNum(kWidth) +
      " " + SvgNum(height) +
      "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"6\" y=\"18\" font-size=\"14\">" +
      SvgText("gshare timeline: " + TimeText(static_cast<double>(t0) / 1e6) + " to " +
              TimeText(static_cast<double>(t1) / 1e6)) +
      "</text>\n";
  // The time axis: round local clock times, their grid lines across every row.
  const double span_s = static_cast<double>(t1 - t0) / 1e6;
  const int64_t step = TickStepMs(span_s);  // ms
  const int64_t first_ms = t0 / 1000, last_ms = t1 / 1000 + 1;
  const int64_t offset = LocalOffset(first_ms / 1000) * 1000;
  constexpr int64_t kDayMs = 86'400'000;
  const bool days = step >= kDayMs || (first_ms + offset) / kDayMs != (last_ms + offset) / kDayMs;
  for (int64_t ms = ((first_ms + offset + step - 1) / step) * step - offset; ms <= last_ms;
       ms += step) {
    if (ms * 1000 < t0 || ms * 1000 > t1) continue;
    const double tx = x(ms * 1000);
    out += "<line class=\"tick\" x1=\"" + SvgNum(tx) + "\" y1=\"" + SvgNum(kTop - 6) + "\" x2=\"" +
           SvgNum(tx) + "\" y2=\"" + SvgNum(y) + "\" stroke=\"#dddddd\"/>\n";
    out += "<text class=\"tick\" x=\"" + SvgNum(tx) + "\" y=\"" + SvgNum(kTop - 10) +
           "\" text-anchor=\"middle\">" + TickLabel(ms, step, days) + "</text>\n";
  }
  out += rows;
  const double bar = kRow - 2 * kBarInset;
  for (const TimelineSpan& s : t.queued) {
    const std::string* gpu = row_gpu(s.gpu, s.job);
    if (gpu == nullptr) continue;
    const double x0 = x(s.start_us);
    out += Rect("queued", s.job, x0, row_y[{*gpu, s.job}] + kBarInset + bar / 4,
                std::max(1.0, x(s.end_us) - x0), bar / 2, kQueueColour,
                TimelineJobLabel(t, s.job) + ": pending in the queue " +
                    SecondsText(s.end_us - s.start_us));
  }
  for (const TimelineSpan& s : t.waits) {
    const double x0 = x(s.start_us);
    out += Rect("wait", s.job, x0, row_y[{s.gpu, s.job}] + kBarInset,
                std::max(1.0, x(s.end_us) - x0), bar, JobColour(s.job, true),
                TimelineJobLabel(t, s.job) + ": waited for the lease " +
                    SecondsText(s.end_us - s.start_us) +
                    (s.released.empty() ? ", waits still" : ", " + s.released),
                " stroke=\"#888888\" stroke-dasharray=\"3 2\"");
  }
  for (const TimelineSpan& s : t.spans) {
    const double x0 = x(s.start_us);
    out += Rect("lease", s.job, x0, row_y[{s.gpu, s.job}] + kBarInset,
                std::max(1.0, x(s.end_us) - x0), bar, JobColour(s.job),
                TimelineJobLabel(t, s.job) + ": lease held " + SecondsText(s.end_us - s.start_us) +
                    (s.mode.empty() ? "" : ", " + s.mode) +
                    (s.released.empty() ? ", held still" : ", released: " + s.released),
                (" data-gpu=\"" + SvgText(s.gpu) + "\"").c_str());
  }
  for (const TimelineEvent& e : t.marks) {
    if (e.job == 0) {
      // A daemon start: a line across everything.
      out += "<line class=\"mark " + std::string(TimelineKindName(e.kind)) + "\" x1=\"" +
             SvgNum(x(e.time_us)) + "\" y1=\"" + SvgNum(kTop) + "\" x2=\"" + SvgNum(x(e.time_us)) +
             "\" y2=\"" + SvgNum(y) + "\" stroke=\"#000000\" stroke-dasharray=\"4 3\"><title>" +
             SvgText(std::string(TimelineKindName(e.kind))) + "</title></line>\n";
      continue;
    }
    const std::string* gpu = row_gpu(e.gpu, e.job);
    if (gpu == nullptr) continue;
    const double top = row_y[{*gpu, e.job}];
    const double mx = x(e.time_us);
    std::string tip = TimelineJobLabel(t, e.job) + ": " + TimelineKindName(e.kind);
    if (e.bytes != 0) tip += " " + FormatBytes(e.bytes);
    if (e.ms != 0) tip += " in " + FormatSeconds(e.ms / 1000);
    if (!e.detail.empty()) tip += " (" + e.detail + ")";
    out += "<line class=\"mark " + std::string(TimelineKindName(e.kind)) + "\" x1=\"" + SvgNum(mx) +
           "\" y1=\"" + SvgNum(top + 1) + "\" x2=\"" + SvgNum(mx) + "\" y2=\"" +
           SvgNum(top + kRow - 1) + "\" stroke=\"" + MarkColour(e.kind) +
           "\" stroke-width=\"2\"><title>" + SvgText(tip) + "</title></line>\n";
  }
  // One legend: the bars, then the marks.
  double lx = 6, ly = y + 24;
  auto swatch = [&](const std::string& fill, const char* extra, double h, const char* what) {
    out += "<rect class=\"legend\" x=\"" + SvgNum(lx) + "\" y=\"" + SvgNum(ly - 6 - h / 2) +
           "\" width=\"18\" height=\"" + SvgNum(h) + "\" fill=\"" + fill + "\"" + extra +
           "/>\n<text x=\"" + SvgNum(lx + 24) + "\" y=\"" + SvgNum(ly) + "\">" + what + "</text>\n";
    lx += 24 + 7.0 * static_cast<double>(std::string_view(what).size()) + 18;
  };
  swatch(JobColour(1), "", bar, "lease held (a colour per job)");
  swatch(JobColour(1, true), " stroke=\"#888888\" stroke-dasharray=\"3 2\"", bar,
         "waiting for the lease");
  swatch(kQueueColour, "", bar / 2, "pending in the queue");
  lx = 6;
  ly += 22;
  for (TimelineKind kind : {TimelineKind::kDrop, TimelineKind::kSwapOut, TimelineKind::kSwapIn,
                            TimelineKind::kCheckpoint, TimelineKind::kSuspend,
                            TimelineKind::kHandoff, TimelineKind::kJobStart}) {
    const char* name = kind == TimelineKind::kJobStart ? "job start, end" : TimelineKindName(kind);
    out += "<line class=\"legend\" x1=\"" + SvgNum(lx) + "\" y1=\"" + SvgNum(ly - 10) + "\" x2=\"" +
           SvgNum(lx) + "\" y2=\"" + SvgNum(ly + 2) + "\" stroke=\"" + MarkColour(kind) +
           "\" stroke-width=\"2\"/>\n<text x=\"" + SvgNum(lx + 5) + "\" y=\"" + SvgNum(ly) + "\">" +
           name + "</text>\n";
    lx += 115;
  }
  if (!no_gpu.empty()) {
    out += "<text class=\"note\" x=\"6\" y=\"" + SvgNum(ly + 22) + "\" fill=\"#555555\">" +
           std::to_string(no_gpu.size()) + (no_gpu.size() == 1 ? " job" : " jobs") +
           " in this window never used a GPU and are not drawn (gshare acct lists them)</text>\n";
  }
  out += "</svg>\n";
  return out;
}

}  // namespace gshare
