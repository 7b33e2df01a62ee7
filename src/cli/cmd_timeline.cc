// `gshare timeline [-S TIME] [-E TIME] [-j IDS] [-a] [-o FILE] [--svg]`: the lease grants,
// drops, swaps and checkpoints the daemon recorded, per GPU and job, as a Chrome trace
// (Perfetto's UI, chrome://tracing) or an SVG drawing. Read through the daemon, which writes
// what it has kept in memory first and answers only with what the requester may see.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>

#include "base/begin_time.h"
#include "base/user_name.h"
#include "cli/acct_format.h"
#include "cli/cli.h"
#include "cli/timeline_model.h"
#include "base/gpu_metrics.h"
#include "cli/timeline_svg.h"
#include "cli/timeline_trace.h"
#include "ipc/job_json.h"
#include "ipc/timeline_request.h"

namespace gshare {
namespace {

using json = nlohmann::json;

// What the SVG draws by default: the last hour with events.
constexpr int64_t kDefaultDrawnUs = 3600LL * 1'000'000;

struct TimelineOptions {
  std::string since;
  std::string until;
  std::string jobs;
  bool all_users = false;
  std::string output = "-";
  bool svg = false;
};

// Every event `request` selects, page by page; *recording gets whether the daemon records.
Status ReadEvents(const GlobalOptions& global, TimelineRequest request,
                  std::vector<TimelineEvent>* events, bool* recording) {
  for (;;) {
    Result<json> reply = RequestDaemon(global, proto::MsgType::kTimeline, request.ToJson(), true);
    if (!reply.ok()) return reply.status();
    const json page = reply->value("events", json());
    if (!page.is_array())
      return Status::Error("the daemon sends no timeline: it is older than this gshare");
    for (const json& j : page) {
      Result<TimelineEvent> e = EventFromJson(j);
      if (!e.ok()) return e.status();
      events->push_back(std::move(e.value()));
    }
    *recording = reply->value("recording", true);
    const json next = reply->value("next_after", json());
    if (!next.is_number_integer()) return Status::Ok();
    request.after_id = next.get<int64_t>();
  }
}

// Writes `text` to `path` ("-": stdout).
Status WriteOutput(const std::string& path, const std::string& text) {
  if (path == "-") {
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() ||
        std::fflush(stdout) != 0) {
      return Status::Error(std::string("cannot write the timeline: ") + std::strerror(errno));
    }
    return Status::Ok();
  }
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return Status::Error("cannot write " + path + ": " + std::strerror(errno));
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int err = errno;
  if (std::fclose(f) != 0 || !written) {
    return Status::Error("cannot write " + path + ": " + std::strerror(written ? errno : err));
  }
  return Status::Ok();
}

// Whether output `path` names an SVG file (its name ends in ".svg").
bool IsSvgPath(const std::string& path) {
  return path.size() >= 4 && path.compare(path.size() - 4, 4, ".svg") == 0;
}

// The extension of `path`'s last component ("" for none, "-" or a dot file), lower-cased.
std::string ExtensionOf(const std::string& path) {
  const std::string base =
      path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  const size_t dot = base.rfind('.');
  if (dot == std::string::npos || dot == 0) return "";
  std::string ext = base.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

int ShowTimeline(const GlobalOptions& global, const TimelineOptions& opt) {
  // What is written is a trace (JSON) or an SVG: any other kind of file asked for is refused
  // before anything is read, instead of a trace under a name that says otherwise.
  if (const std::string ext = ExtensionOf(opt.output);
      !ext.empty() && ext != "svg" && ext != "json" && ext != "trace") {
    const std::string stem = opt.output.substr(0, opt.output.size() - ext.size() - 1);
    spdlog::error(
        "timeline: cannot write \"{}\": the timeline is a trace (.json) or an SVG image (.svg); "
        "write {}.svg and convert it (rsvg-convert -o {} {}.svg)",
        opt.output, stem, opt.output, stem);
    return kExitUsage;
  }
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  TimelineRequest request;
  if (!opt.jobs.empty()) {
    Result<std::set<int64_t>> ids = ParseJobIds(opt.jobs);
    if (!ids.ok()) {
      spdlog::error("timeline: {}", ids.status().message());
      return kExitUsage;
    }
    request.jobs = std::move(ids.value());
  }
  // sacct's window, as `gshare acct`: from 00:00 today until now; all time for --jobs.
  Result<double> since = !opt.since.empty()     ? ParsePastTime(opt.since, now)
                         : request.jobs.empty() ? ParsePastTime("today", now)
                                                : Result<double>(0.0);
  Result<double> until = opt.until.empty() ? Result<double>(now) : ParsePastTime(opt.until, now);
  for (const Result<double>* t : {&since, &until}) {
    if (!t->ok()) {
      spdlog::error("timeline: {}", t->status().message());
      return kExitUsage;
    }
  }
  request.since_us = static_cast<int64_t>(std::max(0.0, since.value()) * 1e6);
  request.until_us = static_cast<int64_t>(std::max(0.0, until.value()) * 1e6);
  // Your own jobs by default, everyone's for root (as sacct); -a asks for everyone's.
  request.all_users = opt.all_users || getuid() == 0;

  std::vector<TimelineEvent> events;
  bool recording = true;
  if (Status st = ReadEvents(global, request, &events, &recording); !st.ok()) {
    spdlog::error("timeline: {}", st.message());
    return ExitFor(st);
  }
  if (!recording)
    spdlog::warn("timeline: the daemon records no events ([timeline] record = false)");
  const bool svg = opt.svg || IsSvgPath(opt.output);
  Timeline timeline = BuildTimeline(events, request.since_us, request.until_us);
  // A drawing of a whole day is unreadable at a picture's width: without -S or -j it shows the
  // last hour that has events (a trace is zoomed in its viewer and keeps the whole window).
  if (svg && opt.since.empty() && request.jobs.empty() && !events.empty()) {
    int64_t first_us = INT64_MAX, last_us = 0;
    for (const TimelineEvent& e : events) {
      first_us = std::min(first_us, e.time_us);
      last_us = std::max(last_us, e.time_us);
    }
    // Only when something would be left out: an hour or less of events is drawn whole.
    if (first_us < last_us - kDefaultDrawnUs) {
      ClipTimeline(&timeline, last_us - kDefaultDrawnUs);
      spdlog::info("timeline: drawing the last hour with events, from {} (-S for another window)",
                   TimeText(static_cast<double>(timeline.since_us) / 1e6));
    }
  }
  std::string text;
  if (svg) {
    // Each GPU headed by its index and model, as nvidia-smi names it, where NVML is.
    std::map<std::string, std::string> labels;
    for (const GpuSample& g : SampleGpus()) {
      labels[g.uuid] = "GPU " + std::to_string(g.index) + (g.name.empty() ? "" : ": " + g.name);
    }
    text = TimelineSvg(timeline, labels);
  } else {
    std::map<uint32_t, std::string> names;  // one password-database lookup per owner
    text = ToJsonText(TimelineTrace(timeline,
                                    [&names](uint32_t uid) {
                                      auto name = names.find(uid);
                                      if (name == names.end()) {
                                        name = names.emplace(uid, UserName(uid)).first;
                                      }
                                      return name->second;
                                    })) +
           "\n";
  }
  if (Status st = WriteOutput(opt.output, text); !st.ok()) {
    spdlog::error("timeline: {}", st.message());
    return kExitError;
  }
  return 0;
}

}  // namespace

void AddTimelineCommand(CLI::App& sub, const GlobalOptions& global, Handler* handler) {
  auto opt = std::make_shared<TimelineOptions>();
  sub.add_option("-S,--starttime,--since", opt->since,
                 "Events from TIME (default: 00:00 today): YYYY-MM-DD[THH:MM[:SS]], HH:MM, "
                 "now-2hours, now-1day, today, yesterday, @UNIX");
  sub.add_option("-E,--endtime,--until", opt->until,
                 "Events until TIME (default: now), same forms");
  sub.add_option("-j,--jobs", opt->jobs, "Only these jobs (comma-separated ids), of any time");
  sub.add_flag("-a,--allusers", opt->all_users,
               "Every user's jobs (default: your own; the system daemon's admins only)");
  sub.add_option("-o,--output", opt->output,
                 "Write to FILE (default and \"-\": stdout): a name ending in .svg draws it; "
                 "other extensions than .json and .trace are refused")
      ->type_name("FILE");
  sub.add_flag("--svg", opt->svg, "Draw an SVG image instead of writing a Chrome trace");
  sub.footer(
      "Examples:\n"
      "  gshare timeline -o trace.json        # open in ui.perfetto.dev or chrome://tracing\n"
      "  gshare timeline -S now-2hours -o gpu.svg\n"
      "  gshare timeline -j 12,13 --svg > jobs.svg\n"
      "The trace: one process per GPU, one thread per job; each lease hold a span, each\n"
      "drop, swap, checkpoint, suspension, job start and end an instant event.");
  *handler = [opt, &global]() { return ShowTimeline(global, *opt); };
}

}  // namespace gshare
