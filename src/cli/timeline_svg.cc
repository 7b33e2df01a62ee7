#include "cli/timeline_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>
#include <vector>

#include "base/terminal_text.h"
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

// A job's colour: hues spread by the golden angle, so neighbouring ids differ.
std::string JobColour(int64_t job) {
  const int hue = static_cast<int>((job * 137) % 360);
  return "hsl(" + std::to_string(hue) + ",62%,52%)";
}

const char* MarkColour(TimelineKind kind) {
  switch (kind) {
    case TimelineKind::kDrop: return "#d62728";
    case TimelineKind::kSwapOut: return "#ff7f0e";
    case TimelineKind::kSwapIn: return "#2ca02c";
    case TimelineKind::kCheckpoint:
    case TimelineKind::kRestore: return "#9467bd";
    case TimelineKind::kSuspend:
    case TimelineKind::kResume: return "#17becf";
    case TimelineKind::kHandoff: return "#8c564b";
    default: return "#555555";
  }
}

// A tick step of 1, 2 or 5 times a power of ten seconds giving at most ~10 ticks.
double TickStep(double span_s) {
  const double raw = std::max(span_s / 10, 1e-3);
  const double power = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10 * power;
}

std::string TickLabel(double seconds, double step) {
  char buf[32];
  if (step >= 3600) {
    std::snprintf(buf, sizeof buf, "%g h", seconds / 3600);
  } else if (step >= 60) {
    std::snprintf(buf, sizeof buf, "%g min", seconds / 60);
  } else {
    std::snprintf(buf, sizeof buf, "%g s", std::round(seconds * 1000) / 1000);
  }
  return buf;
}

std::string SecondsText(int64_t us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(us) / 1e6);
  return buf;
}

}  // namespace

std::string TimelineSvg(const Timeline& t) {
  // The time drawn: from the first thing to the last, inside the window.
  int64_t t0 = INT64_MAX, t1 = INT64_MIN;
  for (const TimelineSpan& s : t.spans) {
    t0 = std::min(t0, s.start_us);
    t1 = std::max(t1, s.end_us);
  }
  for (const TimelineEvent& e : t.marks) {
    t0 = std::min(t0, e.time_us);
    t1 = std::max(t1, e.time_us);
  }
  if (t0 > t1) t0 = t1 = t.since_us;
  t0 = std::max(t0, t.since_us);
  if (t1 <= t0) t1 = t0 + 1'000'000;
  const double plot = kWidth - kLabelWidth - kRightMargin;
  auto x = [&](int64_t us) {
    return kLabelWidth +
           static_cast<double>(std::clamp(us, t0, t1) - t0) / static_cast<double>(t1 - t0) * plot;
  };

  // Sections: each GPU, then "" (no GPU); in each, its jobs by id.
  std::vector<std::string> sections = t.gpus;
  std::map<std::string, std::set<int64_t>> jobs_of;
  for (const TimelineSpan& s : t.spans) jobs_of[s.gpu].insert(s.job);
  for (const TimelineEvent& e : t.marks) {
    if (e.job != 0) jobs_of[e.gpu].insert(e.job);
  }
  if (jobs_of.count("") != 0) sections.push_back("");
  std::map<std::pair<std::string, int64_t>, double> row_y;  // (GPU, job) -> its row's top
  double y = kTop;
  std::string rows;
  for (const std::string& gpu : sections) {
    rows += "<rect class=\"section\" x=\"0\" y=\"" + SvgNum(y) + "\" width=\"" + SvgNum(kWidth) +
            "\" height=\"" + SvgNum(kRow) + "\" fill=\"#eeeeee\"/>\n";
    rows += "<text x=\"6\" y=\"" + SvgNum(y + kRow - 7) + "\" font-weight=\"bold\">" +
            SvgText(gpu.empty() ? "jobs (no GPU)" : "GPU " + gpu) + "</text>\n";
    y += kRow;
    for (int64_t job : jobs_of[gpu]) {
      row_y[{gpu, job}] = y;
      rows += "<text x=\"14\" y=\"" + SvgNum(y + kRow - 7) + "\">" +
              SvgText(TimelineJobLabel(t, job)) + "</text>\n";
      y += kRow;
    }
  }
  const double height = y + 40;

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
  // The time axis, its grid lines across every row.
  const double span_s = static_cast<double>(t1 - t0) / 1e6;
  const double step = TickStep(span_s);
  for (double s = 0; s <= span_s + 1e-9; s += step) {
    const double tx = kLabelWidth + s / span_s * plot;
    out += "<line class=\"tick\" x1=\"" + SvgNum(tx) + "\" y1=\"" + SvgNum(kTop - 6) + "\" x2=\"" +
           SvgNum(tx) + "\" y2=\"" + SvgNum(y) + "\" stroke=\"#dddddd\"/>\n";
    out += "<text x=\"" + SvgNum(tx) + "\" y=\"" + SvgNum(kTop - 10) +
           "\" text-anchor=\"middle\">" + TickLabel(s, step) + "</text>\n";
  }
  out += rows;
  for (const TimelineSpan& s : t.spans) {
    const double top = row_y[{s.gpu, s.job}] + kBarInset;
    const double x0 = x(s.start_us);
    const double w = std::max(1.0, x(s.end_us) - x0);
    std::string tip = TimelineJobLabel(t, s.job) + ": lease held " +
                      SecondsText(s.end_us - s.start_us) + (s.mode.empty() ? "" : ", " + s.mode) +
                      (s.released.empty() ? ", held still" : ", released: " + s.released);
    out += "<rect class=\"lease\" data-job=\"" + std::to_string(s.job) + "\" data-gpu=\"" +
           SvgText(s.gpu) + "\" x=\"" + SvgNum(x0) + "\" y=\"" + SvgNum(top) + "\" width=\"" +
           SvgNum(w) + "\" height=\"" + SvgNum(kRow - 2 * kBarInset) + "\" fill=\"" +
           JobColour(s.job) + "\"><title>" + SvgText(tip) + "</title></rect>\n";
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
    const double top = row_y[{e.gpu, e.job}];
    const double mx = x(e.time_us);
    std::string tip = TimelineJobLabel(t, e.job) + ": " + TimelineKindName(e.kind);
    if (e.bytes != 0) tip += " " + AcctBytes(e.bytes);
    if (e.ms != 0) tip += " in " + SvgNum(e.ms) + " ms";
    if (!e.detail.empty()) tip += " (" + e.detail + ")";
    out += "<line class=\"mark " + std::string(TimelineKindName(e.kind)) + "\" x1=\"" + SvgNum(mx) +
           "\" y1=\"" + SvgNum(top + 1) + "\" x2=\"" + SvgNum(mx) + "\" y2=\"" +
           SvgNum(top + kRow - 1) + "\" stroke=\"" + MarkColour(e.kind) +
           "\" stroke-width=\"2\"><title>" + SvgText(tip) + "</title></line>\n";
  }
  // The legend.
  double lx = 6;
  const double ly = y + 24;
  for (TimelineKind kind :
       {TimelineKind::kDrop, TimelineKind::kSwapOut, TimelineKind::kSwapIn,
        TimelineKind::kCheckpoint, TimelineKind::kSuspend, TimelineKind::kJobStart}) {
    out += "<line x1=\"" + SvgNum(lx) + "\" y1=\"" + SvgNum(ly - 10) + "\" x2=\"" + SvgNum(lx) +
           "\" y2=\"" + SvgNum(ly + 2) + "\" stroke=\"" + MarkColour(kind) +
           "\" stroke-width=\"2\"/>\n<text x=\"" + SvgNum(lx + 5) + "\" y=\"" + SvgNum(ly) + "\">" +
           TimelineKindName(kind) + "</text>\n";
    lx += 110;
  }
  out += "</svg>\n";
  return out;
}

}  // namespace gshare
