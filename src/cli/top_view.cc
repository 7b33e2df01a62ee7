// RenderTop (top_view.h): a title line, the GPU table, the job table, the help and message
// lines. Widths are fixed per column; names and commands are cut to the room left.
#include "cli/top_view.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <utility>

#include "base/byte_size.h"
#include "base/duration.h"
#include "base/job_state.h"
#include "base/terminal_text.h"
#include "cli/daemon_glance.h"
#include "cli/job_status_text.h"
#include "cli/queue_format.h"

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
  // Below 100 columns the temperature and power go, so that the lease's columns fit 80.
  const bool sensors = in.width >= 100;
  auto gpu_line = [sensors](const std::string& index, const std::string& name,
                            const std::string& util, const std::string& mem,
                            const std::string& temp, const std::string& power,
                            const std::string& mode, const std::string& holder,
                            const std::string& waiters) {
    std::string sensor_cells = sensors ? Format(" %4s %5s", temp.c_str(), power.c_str()) : "";
    return Format("%-3s %-14s %4s %-15s", index.c_str(), Cut(name, 14).c_str(), util.c_str(),
                  mem.c_str()) +
           sensor_cells + Format(" %-9s %-12s %s", mode.c_str(), holder.c_str(), waiters.c_str());
  };
  out->push_back(
      {gpu_line("GPU", "NAME", "UTIL", "MEMORY GiB", "TEMP", "POWER", "MODE", "HOLDER", "WAITERS"),
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
        holder = h.dump() + " " + FormatSeconds(g->value("held_seconds", 0.0));
      }
      std::string w;
      for (const auto& id : g->value("waiters", json::array()))
        w += (w.empty() ? "" : ",") + id.dump();
      if (!w.empty()) waiters = w;
    }
    out->push_back({gpu_line(index, name, util, mem, temp, power, mode, holder, waiters),
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

std::string Lease(const json& j) {
  if (Group(StateOf(j)) == 2) return "-";  // an ended job holds nothing, whatever it last held
  std::string lease = j.value("lease", std::string("-"));
  if (lease == "idle" && j.value("idle_seconds", json()).is_number()) {
    lease = "idle " + FormatSeconds(j.at("idle_seconds").get<double>());
  }
  return lease;
}

// Why the job waits: a pending job's reason (Slurm's words: Priority, Dependency, ...), or what
// a running one waits for (its memory's waiting_for, e.g. GpuMemory); an ended job's reason.
// The job's memory object, read in place (no copy per column); nullptr when it has none.
const json* MemoryOf(const json& j) {
  auto it = j.find("memory");
  return it != j.end() && it->is_object() ? &*it : nullptr;
}
// A live job's memory object (it has "allocated"), else nullptr.
const json* LiveMemory(const json& j) {
  const json* mem = MemoryOf(j);
  return mem != nullptr && mem->contains("allocated") ? mem : nullptr;
}

// Whether the status document lists job `j` as waiting at its first CUDA call for room to join
// its GPU's MPS server (daemon.mps.arriving).
bool MpsArriving(const json& j, const TopInput& in) {
  return in.status != nullptr && MpsArrivingJobs(*in.status).count(j.value("id", int64_t{0})) != 0;
}

std::string Reason(const json& j, const TopInput& in) {
  std::string reason = j.value("reason", std::string());
  const json* mem = MemoryOf(j);
  if (reason.empty() && Group(StateOf(j)) == 0 && MpsArriving(j, in)) reason = kMpsRoomReason;
  if (reason.empty() && Group(StateOf(j)) == 0 && mem != nullptr &&
      mem->value("waiting_for", json()).is_string())
    reason = mem->at("waiting_for").get<std::string>();
  return reason.empty() ? "-" : TerminalText(reason);
}

uint64_t Resident(const json& j) {
  const json* mem = LiveMemory(j);
  return mem != nullptr ? mem->value("resident", uint64_t{0}) : j.value("peak_bytes", uint64_t{0});
}

// A column of the job table. The table keeps every column the terminal has room for: when it is
// narrow the columns of the highest `drop` go first (0: never), NAME and REASON shrink from
// their widest to their narrowest, and COMMAND takes what is left.
struct JobColumn {
  const char* header;
  size_t narrow, wide;  // widths in characters; equal for a fixed column
  int drop;
  bool right;
  std::function<std::string(const json&, const TopInput&)> value;
};

const std::vector<JobColumn>& JobColumns() {
  static const std::vector<JobColumn> columns = {
      {"JOB", 6, 6, 0, false,
       [](const json& j, const TopInput&) { return std::to_string(j.value("id", int64_t{0})); }},
      {"USER", 9, 9, 6, false,
       [](const json& j, const TopInput& in) {
         uint32_t uid = j.value("uid", 0u);
         return TerminalText(in.user_name ? in.user_name(uid) : std::to_string(uid));
       }},
      {"ST", 2, 2, 0, false,
       [](const json& j, const TopInput&) { return j.value("state_code", std::string("?")); }},
      {"PRI", 4, 4, 1, true,
       [](const json& j, const TopInput&) { return std::to_string(j.value("priority", 0)); }},
      {"NAME", 10, 22, 0, false,
       [](const json& j, const TopInput&) { return TerminalText(j.value("name", std::string())); }},
      {"REASON", 12, 20, 0, false, [](const json& j, const TopInput& in) { return Reason(j, in); }},
      {"LEASE", 11, 11, 3, false, [](const json& j, const TopInput&) { return Lease(j); }},
      {"ON-GPU", 8, 8, 2, true,
       [](const json& j, const TopInput&) { return FormatSeconds(j.value("lease_seconds", 0.0)); }},
      {"WAITED", 8, 8, 7, true,
       [](const json& j, const TopInput&) { return FormatSeconds(j.value("wait_seconds", 0.0)); }},
      {"RESIDENT", 8, 8, 5, true,
       [](const json& j, const TopInput&) { return FormatBytes(Resident(j)); }},
      {"SWAPPED", 8, 8, 8, true,
       [](const json& j, const TopInput&) {
         const json* m = LiveMemory(j);
         return m != nullptr ? FormatBytes(m->value("swapped", uint64_t{0})) : std::string("-");
       }},
      {"SWAPS", 6, 6, 9, true,
       [](const json& j, const TopInput&) {
         const json* m = LiveMemory(j);
         if (m == nullptr) return std::string("-");
         return std::to_string(m->value("swaps_out", uint64_t{0}) +
                               m->value("checkpoints", uint64_t{0})) +
                "/" +
                std::to_string(m->value("swaps_in", uint64_t{0}) +
                               m->value("restores", uint64_t{0}));
       }},
      {"GPU", 4, 4, 4, false,
       [](const json& j, const TopInput&) {
         std::string gpu =
             j.value("slot", json()).is_string() ? j.at("slot").get<std::string>() : "";
         if (gpu.empty()) gpu = j.value("gpu", std::string());
         return gpu.empty() ? std::string("-") : gpu;
       }},
  };
  return columns;
}

// The columns that fit `width` and the width each gets; COMMAND gets the rest.
std::vector<std::pair<const JobColumn*, size_t>> FitColumns(size_t width) {
  std::vector<const JobColumn*> kept;
  for (const JobColumn& c : JobColumns()) kept.push_back(&c);
  auto used = [&kept](bool wide) {
    size_t n = 0;
    for (const JobColumn* c : kept) n += (wide ? c->wide : c->narrow) + 1;
    return n;
  };
  // Room for at least a few characters of the command, else drop the least needed column.
  constexpr size_t kCommandMin = 8;
  while (used(false) + kCommandMin > width) {
    auto least =
        std::max_element(kept.begin(), kept.end(),
                         [](const JobColumn* a, const JobColumn* b) { return a->drop < b->drop; });
    if (least == kept.end() || (*least)->drop == 0) break;
    kept.erase(least);
  }
  size_t spare = width > used(false) + kCommandMin ? width - used(false) - kCommandMin : 0;
  std::vector<std::pair<const JobColumn*, size_t>> out;
  for (const JobColumn* c : kept) {
    size_t grow = std::min(spare, c->wide - c->narrow);
    spare -= grow;
    out.emplace_back(c, c->narrow + grow);
  }
  return out;
}

std::string Pad(const std::string& text, size_t width, bool right) {
  std::string v = Cut(text, width);
  std::string fill(width - std::min(width, v.size()), ' ');
  return right ? fill + v : v + fill;
}

std::string JobLine(const std::vector<std::pair<const JobColumn*, size_t>>& columns,
                    const std::function<std::string(const JobColumn&)>& cell,
                    const std::string& command) {
  std::string line;
  for (const auto& [c, w] : columns) line += Pad(cell(*c), w, c->right) + " ";
  return line + command;
}

const char* SortName(TopSort sort) {
  switch (sort) {
    case TopSort::kPriority: return "priority";
    case TopSort::kGpuTime: return "on-GPU time";
    case TopSort::kMemory: return "resident memory";
    case TopSort::kId: return "job id";
    default: return "state";
  }
}

// The order of the job rows: running and suspended first, then pending, then the ended (each
// group in the daemon's order), or by the key chosen with `o` (highest first; ties as above).
void SortJobs(std::vector<const json*>* jobs, TopSort sort) {
  std::stable_sort(jobs->begin(), jobs->end(), [](const json* a, const json* b) {
    return Group(StateOf(*a)) < Group(StateOf(*b));
  });
  auto by = [jobs](auto key) {
    std::stable_sort(jobs->begin(), jobs->end(),
                     [&key](const json* a, const json* b) { return key(*a) > key(*b); });
  };
  switch (sort) {
    case TopSort::kPriority: by([](const json& j) { return j.value("priority", 0); }); break;
    case TopSort::kGpuTime: by([](const json& j) { return j.value("lease_seconds", 0.0); }); break;
    case TopSort::kMemory: by([](const json& j) { return Resident(j); }); break;
    case TopSort::kId: by([](const json& j) { return j.value("id", int64_t{0}); }); break;
    default: break;
  }
}

void HelpLines(std::vector<TopLine>* out) {
  const char* lines[] = {
      "Keys",
      "  q            quit",
      "  up/down j/k  select a job (the row's job only: one task of an array)",
      "  c            cancel the selected job (asks y/n)",
      "  h            hold or release it (pending jobs)",
      "  + -          raise or lower its priority",
      "  s            suspend or resume it",
      "  o            sort by state, priority, on-GPU time, resident memory, job id (in turn)",
      "  ?            this help, and back",
      "Columns (a narrow terminal drops SWAPS, SWAPPED, WAITED, USER, RESIDENT, GPU, LEASE first)",
      "  ST      state: R running, PD pending, S suspended, CD CA F TO LO ended",
      "  REASON  why a pending job waits (Priority, Dependency, Resources, JobHeldUser, ...),",
      "          or what a running one waits for (GpuMemory, HigherPriorityMemory)",
      "  LEASE   the job's hold on its GPU now: held, idle, waiting, shared; - when ended",
      "  ON-GPU  time it held a lease; WAITED  time it waited for one",
      "  RESIDENT its memory on the GPU (peak once ended); SWAPPED  in host memory",
      "  SWAPS   memory moved out/in (evictions and checkpoints / swap-ins and restores)",
  };
  for (const char* l : lines) out->push_back({l, TopLine::Style::kPlain});
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
  if (in.sort != TopSort::kState) title += std::string("; sorted by ") + SortName(in.sort);
  if (!in.clock.empty()) title += "   " + in.clock;
  f.lines.push_back({title, TopLine::Style::kTitle});
  GpuLines(in, &f.lines);
  f.lines.push_back({"", TopLine::Style::kPlain});
  const auto columns = FitColumns(in.width > 1 ? static_cast<size_t>(in.width - 1) : 0);
  std::vector<const json*> jobs;
  if (in.status != nullptr) {
    for (const auto& j : ArrayOf(*in.status, "jobs")) jobs.push_back(&j);
  }
  SortJobs(&jobs, in.sort);
  for (const json* j : jobs) f.jobs.push_back(j->value("id", int64_t{0}));
  f.selected_job = f.jobs.empty() ? 0 : f.jobs.front();
  if (std::find(f.jobs.begin(), f.jobs.end(), in.selected_job) != f.jobs.end()) {
    f.selected_job = in.selected_job;
  }
  if (in.help) {
    HelpLines(&f.lines);
  } else {
    f.lines.push_back(
        {JobLine(
             columns, [](const JobColumn& c) { return std::string(c.header); }, "COMMAND"),
         TopLine::Style::kHeader});
    for (const json* j : jobs) {
      int64_t id = j->value("id", int64_t{0});
      f.lines.push_back(
          {JobLine(
               columns, [&](const JobColumn& c) { return c.value(*j, in); }, JobCommandText(*j)),
           id == f.selected_job ? TopLine::Style::kSelected : StyleOf(StateOf(*j))});
    }
  }
  if (jobs.empty() && !in.help) f.lines.push_back({"(no jobs)", TopLine::Style::kPlain});
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
