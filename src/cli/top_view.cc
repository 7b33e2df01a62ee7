// RenderTop (top_view.h): a title line, the GPU table, the job table, the help and message
// lines. Widths are fixed per column; names and commands are cut to the room left.
#include "cli/top_view.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

#include "base/job_state.h"
#include "base/terminal_text.h"
#include "cli/job_status_text.h"

namespace gshare {
namespace {

using json = nlohmann::json;

std::string Format(const char* fmt, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

// The array `key` of `obj` by reference (json::value() returns a copy, so pointers into it
// would dangle); an empty array when absent or not an array.
const json& ArrayOf(const json& obj, const char* key) {
  static const json kEmpty = json::array();
  auto it = obj.find(key);
  return it != obj.end() && it->is_array() ? *it : kEmpty;
}

std::string Gib(double bytes) { return Format("%.1f", bytes / (1024.0 * 1024 * 1024)); }

std::string Bytes(uint64_t b) {
  if (b == 0) return "0";
  const char* units[] = {"B", "K", "M", "G", "T"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return Format(u == 0 ? "%.0f%s" : "%.1f%s", v, units[u]);
}

std::string Duration(double s) {
  if (s < 60) return Format("%.1fs", s);
  int t = static_cast<int>(s);
  if (s < 3600) return Format("%dm%02ds", t / 60, t % 60);
  return Format("%dh%02dm", t / 3600, t / 60 % 60);
}

std::string Cut(const std::string& s, size_t n) {
  return s.size() <= n ? s : (n > 1 ? s.substr(0, n - 1) + "+" : s.substr(0, n));
}

// A job document's state; nullopt for a name this version does not know (a newer daemon's).
std::optional<JobState> StateOf(const json& job) {
  return JobStateFromName(job.value("state", std::string()));
}

TopLine::Style StyleOf(std::optional<JobState> state) {
  if (!state) return TopLine::Style::kEnded;
  switch (*state) {
    case JobState::kRunning:
    case JobState::kSuspended: return TopLine::Style::kRunning;
    case JobState::kPending: return TopLine::Style::kPending;
    case JobState::kFailed:
    case JobState::kTimeout:
    case JobState::kLost: return TopLine::Style::kFailed;
    default: return TopLine::Style::kEnded;
  }
}

// Running and suspended jobs first, then pending ones, then the ended.
int Group(std::optional<JobState> state) {
  if (state == JobState::kRunning || state == JobState::kSuspended) return 0;
  return state == JobState::kPending ? 1 : 2;
}

void GpuLines(const TopInput& in, std::vector<TopLine>* out) {
  out->push_back({Format("%-3s %-14s %4s %-15s %4s %5s %-9s %-12s %s", "GPU", "NAME", "UTIL",
                         "MEMORY GiB", "TEMP", "POWER", "MODE", "HOLDER", "WAITERS"),
                  TopLine::Style::kHeader});
  // The daemon's GPUs by UUID; NVML's order first, then any NVML does not list.
  std::map<std::string, const json*> leased;
  if (in.status != nullptr) {
    for (const auto& g : ArrayOf(*in.status, "gpus")) {
      leased[g.value("uuid", std::string())] = &g;
    }
  }
  auto row = [&](const std::string& index, const GpuSample* s, const json* g) {
    std::string name = s != nullptr ? s->name : "";
    std::string util = s != nullptr && s->util_percent >= 0 ? Format("%d%%", s->util_percent) : "-";
    std::string mem = "-";
    if (s != nullptr && s->memory_total > 0) {
      mem = Gib(static_cast<double>(s->memory_used)) + "/" +
            Gib(static_cast<double>(s->memory_total));
    } else if (g != nullptr && g->value("capacity", uint64_t{0}) > 0) {
      mem = "-/" + Gib(static_cast<double>(g->value("capacity", uint64_t{0})));
    }
    std::string temp =
        s != nullptr && s->temperature_c >= 0 ? Format("%dC", s->temperature_c) : "-";
    std::string power = s != nullptr && s->power_mw >= 0 ? Format("%dW", s->power_mw / 1000) : "-";
    std::string mode = "idle", holder = "-", waiters = "-";
    if (g != nullptr) {
      mode = g->value("mode", std::string("-"));
      const json& h = g->value("holder", json());
      if (!h.is_null()) {
        holder = h.dump() + " " + Duration(g->value("held_seconds", 0.0));
      }
      std::string w;
      for (const auto& id : g->value("waiters", json::array()))
        w += (w.empty() ? "" : ",") + id.dump();
      if (!w.empty()) waiters = w;
    }
    out->push_back({Format("%-3s %-14s %4s %-15s %4s %5s %-9s %-12s %s", index.c_str(),
                           Cut(name, 14).c_str(), util.c_str(), mem.c_str(), temp.c_str(),
                           power.c_str(), mode.c_str(), holder.c_str(), waiters.c_str()),
                    TopLine::Style::kPlain});
  };
  for (const GpuSample& s : in.gpus) {
    auto it = leased.find(s.uuid);
    row(std::to_string(s.index), &s, it != leased.end() ? it->second : nullptr);
    if (it != leased.end()) leased.erase(it);
  }
  for (const auto& [uuid, g] : leased) {
    const json& index = g->value("index", json()).is_null() ? g->value("ordinal", json())
                                                            : g->value("index", json());
    row(index.is_null() ? "-" : index.dump(), nullptr, g);
  }
  if (in.gpus.empty() && (in.status == nullptr || ArrayOf(*in.status, "gpus").empty())) {
    out->push_back(
        {"(no GPU known: NVML does not answer and no job used one yet)", TopLine::Style::kPlain});
  }
}

std::string JobRow(const json& j, const TopInput& in) {
  const json mem = j.value("memory", json::object());
  bool live = mem.contains("allocated");
  uint32_t uid = j.value("uid", 0u);
  std::string user = in.user_name ? in.user_name(uid) : std::to_string(uid);
  std::string lease = j.value("lease", std::string("-"));
  if (lease == "idle" && j.value("idle_seconds", json()).is_number()) {
    lease = "idle " + Duration(j.at("idle_seconds").get<double>());
  }
  std::string swaps = "-";
  if (live) {
    swaps = std::to_string(mem.value("swaps_out", uint64_t{0}) +
                           mem.value("checkpoints", uint64_t{0})) +
            "/" +
            std::to_string(mem.value("swaps_in", uint64_t{0}) + mem.value("restores", uint64_t{0}));
  }
  std::string gpu = j.value("slot", json()).is_string() ? j.at("slot").get<std::string>() : "-";
  if (gpu.empty()) gpu = j.value("gpu", std::string("-"));
  if (gpu.empty()) gpu = "-";
  return Format("%-6lld %-9s %-2s %4d %-22s %-11s %8s %8s %8s %8s %6s %-4s %s",
                static_cast<long long>(j.value("id", int64_t{0})),
                Cut(TerminalText(user), 9).c_str(), j.value("state_code", std::string("?")).c_str(),
                j.value("priority", 0),
                Cut(TerminalText(j.value("name", std::string())), 22).c_str(),
                Cut(lease, 11).c_str(), Duration(j.value("lease_seconds", 0.0)).c_str(),
                Duration(j.value("wait_seconds", 0.0)).c_str(),
                live ? Bytes(mem.value("resident", uint64_t{0})).c_str()
                     : Bytes(j.value("peak_bytes", uint64_t{0})).c_str(),
                live ? Bytes(mem.value("swapped", uint64_t{0})).c_str() : "-", swaps.c_str(),
                Cut(gpu, 4).c_str(), JobCommandText(j).c_str());
}

}  // namespace

TopFrame RenderTop(const TopInput& in) {
  TopFrame f;
  std::string title = "gshare top";
  if (in.status != nullptr) {
    const json& d = in.status->value("daemon", json::object());
    int running = 0, pending = 0;
    for (const auto& j : ArrayOf(*in.status, "jobs")) {
      int g = Group(StateOf(j));
      running += g == 0;
      pending += g == 1;
    }
    title += Format(" - %s daemon %d, scheduler %s; %d running, %d pending",
                    d.value("mode", std::string("user")).c_str(), d.value("pid", 0),
                    d.value("scheduler", std::string("?")).c_str(), running, pending);
  } else {
    title += " - no daemon";
  }
  if (!in.clock.empty()) title += "   " + in.clock;
  f.lines.push_back({title, TopLine::Style::kTitle});
  GpuLines(in, &f.lines);
  f.lines.push_back({"", TopLine::Style::kPlain});
  f.lines.push_back({Format("%-6s %-9s %-2s %4s %-22s %-11s %8s %8s %8s %8s %6s %-4s %s", "JOB",
                            "USER", "ST", "PRI", "NAME", "LEASE", "ON-GPU", "WAITED", "RESIDENT",
                            "SWAPPED", "SWAPS", "GPU", "COMMAND"),
                     TopLine::Style::kHeader});
  std::vector<const json*> jobs;
  if (in.status != nullptr) {
    for (const auto& j : ArrayOf(*in.status, "jobs")) jobs.push_back(&j);
  }
  std::stable_sort(jobs.begin(), jobs.end(), [](const json* a, const json* b) {
    return Group(StateOf(*a)) < Group(StateOf(*b));
  });
  for (const json* j : jobs) f.jobs.push_back(j->value("id", int64_t{0}));
  f.selected_job = f.jobs.empty() ? 0 : f.jobs.front();
  if (std::find(f.jobs.begin(), f.jobs.end(), in.selected_job) != f.jobs.end()) {
    f.selected_job = in.selected_job;
  }
  for (const json* j : jobs) {
    int64_t id = j->value("id", int64_t{0});
    f.lines.push_back(
        {JobRow(*j, in), id == f.selected_job ? TopLine::Style::kSelected : StyleOf(StateOf(*j))});
  }
  if (jobs.empty()) f.lines.push_back({"(no jobs)", TopLine::Style::kPlain});
  f.lines.push_back({"", TopLine::Style::kPlain});
  f.lines.push_back({kTopKeys, TopLine::Style::kHeader});
  if (!in.message.empty()) f.lines.push_back({TerminalText(in.message), TopLine::Style::kPlain});
  size_t width = in.width > 1 ? static_cast<size_t>(in.width - 1) : 0;
  for (TopLine& l : f.lines) {
    if (l.text.size() > width) l.text.resize(width);
  }
  return f;
}

}  // namespace gshare
