// Names follow Prometheus's conventions: gshare_ prefix, base units in the name (seconds,
// bytes), _total for counters; one family per quantity, with a label for its kinds
// (direction="out"/"in", kind="used"/"capacity") rather than a name per kind.
#include "ipc/status_metrics.h"

#include <optional>
#include <string_view>
#include <vector>

#include "base/job_state.h"
#include "base/prometheus_text.h"
#include "base/user_name.h"

namespace gshare {
namespace {

using json = nlohmann::json;
using Type = PrometheusText::Type;
using Labels = PrometheusText::Labels;

// The number at `key` of `obj`, when there is one.
std::optional<double> Number(const json& obj, std::string_view key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string Text(const json& obj, std::string_view key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

// A GPU's labels: gpu (NVML's index, else the ordinal the first shim gave it) and uuid.
Labels GpuLabels(const json& g) {
  std::string gpu;
  if (auto index = Number(g, "index")) {
    gpu = std::to_string(static_cast<int64_t>(*index));
  } else if (auto ordinal = Number(g, "ordinal")) {
    gpu = std::to_string(static_cast<int64_t>(*ordinal));
  }
  return {{"gpu", gpu}, {"uuid", Text(g, "uuid")}};
}

Labels With(Labels labels, std::string_view key, std::string value) {
  labels.emplace_back(key, std::move(value));
  return labels;
}

// One family over a list of objects: a sample per object that has the field.
struct Field {
  std::string_view name;
  Type type;
  std::string_view help;
  std::string_view path;   // field, or "memory.field"
  std::string_view label;  // extra label's name, "" for none
  std::string_view value;  // extra label's value
};

std::optional<double> At(const json& obj, std::string_view path) {
  const size_t dot = path.find('.');
  if (dot == std::string_view::npos) return Number(obj, path);
  auto inner = obj.find(path.substr(0, dot));
  if (inner == obj.end() || !inner->is_object()) return std::nullopt;
  return Number(*inner, path.substr(dot + 1));
}

// Writes families of `fields` (those of one name consecutive) for each of `items`.
void WriteFields(PrometheusText& out, const std::vector<Field>& fields,
                 const std::vector<std::pair<Labels, const json*>>& items) {
  std::string_view family;
  for (const Field& f : fields) {
    if (f.name != family) {
      out.Family(f.name, f.type, f.help);
      family = f.name;
    }
    for (const auto& [labels, obj] : items) {
      std::optional<double> v = At(*obj, f.path);
      if (!v) continue;
      out.Sample(f.name, f.label.empty() ? labels : With(labels, f.label, std::string(f.value)),
                 *v);
    }
  }
}

const std::vector<Field> kGpuFields = {
    {"gshare_gpu_lease_seconds_total", Type::kCounter,
     "Seconds jobs held the GPU's lease, summed over jobs (two jobs sharing it for 1 s count 2 s), "
     "since the daemon started.",
     "lease_seconds_total", "", ""},
    {"gshare_gpu_wait_seconds_total", Type::kCounter,
     "Seconds jobs waited for the GPU's lease, summed over jobs, since the daemon started.",
     "wait_seconds_total", "", ""},
    {"gshare_gpu_swaps_total", Type::kCounter,
     "Swap-engine moves of jobs' memory on the GPU (out: evictions to host memory, in: "
     "swap-ins), since the daemon started.",
     "swaps_out_total", "direction", "out"},
    {"gshare_gpu_swaps_total", Type::kCounter, "", "swaps_in_total", "direction", "in"},
    {"gshare_gpu_swap_bytes_total", Type::kCounter,
     "Bytes the swap engine moved between the GPU and host memory, since the daemon started.",
     "bytes_out_total", "direction", "out"},
    {"gshare_gpu_swap_bytes_total", Type::kCounter, "", "bytes_in_total", "direction", "in"},
    {"gshare_gpu_memory_bytes", Type::kGauge,
     "Device memory as the daemon's ledger counts it: used by jobs' processes (resident, with "
     "their contexts) and the GPU's capacity.",
     "used_bytes", "kind", "used"},
    {"gshare_gpu_memory_bytes", Type::kGauge, "", "capacity", "kind", "capacity"},
    {"gshare_gpu_mode_switches_total", Type::kCounter,
     "Switches of the GPU between shared and exclusive mode.", "mode_switches", "", ""},
    {"gshare_gpu_drains_total", Type::kCounter,
     "Lease releases that followed a DROP (handoffs in exclusive mode).", "drains", "", ""},
};

const std::vector<Field> kJobFields = {
    {"gshare_job_lease_seconds_total", Type::kCounter,
     "Seconds the job held a GPU lease in its current run (summed over its GPUs).", "lease_seconds",
     "", ""},
    {"gshare_job_wait_seconds_total", Type::kCounter,
     "Seconds the job waited for a GPU lease in its current run.", "wait_seconds", "", ""},
    {"gshare_job_held_back_seconds_total", Type::kCounter,
     "Seconds the job's submissions waited for jobs of higher priority sharing its GPU.",
     "held_back_seconds", "", ""},
    {"gshare_job_swaps_total", Type::kCounter,
     "Moves of the job's memory (evictions and checkpoints out, swap-ins and restores in), as "
     "gshare acct counts them.",
     "swaps_out", "direction", "out"},
    {"gshare_job_swaps_total", Type::kCounter, "", "swaps_in", "direction", "in"},
    {"gshare_job_swap_bytes_total", Type::kCounter,
     "Bytes the swap engine moved for the job between device and host memory.", "memory.bytes_out",
     "direction", "out"},
    {"gshare_job_swap_bytes_total", Type::kCounter, "", "memory.bytes_in", "direction", "in"},
    {"gshare_job_memory_bytes", Type::kGauge,
     "The job's device memory: allocated, resident on the GPU, swapped out to host memory.",
     "memory.allocated", "kind", "allocated"},
    {"gshare_job_memory_bytes", Type::kGauge, "", "memory.resident", "kind", "resident"},
    {"gshare_job_memory_bytes", Type::kGauge, "", "memory.swapped", "kind", "swapped"},
    {"gshare_job_peak_memory_bytes", Type::kGauge,
     "The most device memory the job had allocated at once in its run.", "peak_bytes", "", ""},
};

bool Live(const json& job) {
  const std::optional<JobState> state = JobStateFromName(Text(job, "state"));
  return state == JobState::kRunning || state == JobState::kSuspended;
}

}  // namespace

std::string StatusMetrics(const json& status) {
  PrometheusText out;
  const json empty = json::object();
  const json& daemon = status.contains("daemon") ? status["daemon"] : empty;

  out.Family("gshare_daemon_start_time_seconds", Type::kGauge,
             "When the daemon started, in seconds since the Unix epoch: per-GPU counters count "
             "from then.");
  if (auto start = Number(daemon, "start_time")) {
    out.Sample("gshare_daemon_start_time_seconds", *start);
  }
  out.Family("gshare_daemon_info", Type::kGauge,
             "The daemon's version and mode (user: one user's daemon; system: the machine's).");
  out.Sample("gshare_daemon_info",
             {{"version", Text(daemon, "version")}, {"mode", Text(daemon, "mode")}}, 1);
  out.Family("gshare_scheduler_enabled", Type::kGauge,
             "1 while the scheduler arbitrates the GPUs, 0 after `gshare scheduler off`.");
  out.Sample("gshare_scheduler_enabled", Text(daemon, "scheduler") == "off" ? 0 : 1);
  out.Family("gshare_queue_paused", Type::kGauge,
             "1 while `gshare queue pause` holds back every submitted job.");
  out.Sample("gshare_queue_paused", Text(daemon, "queue") == "paused" ? 1 : 0);

  out.Family("gshare_queue_jobs", Type::kGauge,
             "Jobs in the queue by state (PENDING, RUNNING, SUSPENDED), as gshare queue lists "
             "them.");
  if (auto counts = daemon.find("job_counts"); counts != daemon.end() && counts->is_object()) {
    for (const char* state : {"PENDING", "RUNNING", "SUSPENDED"}) {
      out.Sample("gshare_queue_jobs", {{"state", state}}, Number(*counts, state).value_or(0));
    }
  }

  std::vector<std::pair<Labels, const json*>> gpus;
  std::vector<json> gpu_extra;  // holders and waiters as numbers
  if (auto it = status.find("gpus"); it != status.end() && it->is_array()) {
    gpu_extra.reserve(it->size());
    for (const json& g : *it) {
      json extra{{"holders", g.value("holding", json::array()).size()},
                 {"waiters", g.value("waiters", json::array()).size()},
                 {"exclusive", Text(g, "mode") == "exclusive" ? 1 : 0}};
      gpu_extra.push_back(std::move(extra));
      gpus.emplace_back(GpuLabels(g), &g);
    }
  }
  WriteFields(out, kGpuFields, gpus);
  std::vector<std::pair<Labels, const json*>> gpu_now;
  for (size_t i = 0; i < gpus.size(); ++i) gpu_now.emplace_back(gpus[i].first, &gpu_extra[i]);
  WriteFields(out,
              {{"gshare_gpu_lease_holders", Type::kGauge,
                "Jobs holding the GPU's lease now (several in shared mode).", "holders", "", ""},
               {"gshare_gpu_lease_waiters", Type::kGauge, "Jobs waiting for the GPU's lease now.",
                "waiters", "", ""},
               {"gshare_gpu_exclusive", Type::kGauge,
                "1 while the GPU is in exclusive mode (one job at a time), 0 while shared.",
                "exclusive", "", ""}},
              gpu_now);

  std::vector<std::pair<Labels, const json*>> jobs;
  if (auto it = status.find("jobs"); it != status.end() && it->is_array()) {
    for (const json& j : *it) {
      if (!Live(j) || !j.contains("id")) continue;
      std::string user;
      if (auto uid = Number(j, "uid")) user = UserName(static_cast<uint32_t>(*uid));
      jobs.emplace_back(Labels{{"job", std::to_string(j["id"].get<int64_t>())},
                               {"user", user},
                               {"name", Text(j, "name")}},
                        &j);
    }
  }
  WriteFields(out, kJobFields, jobs);
  return out.Take();
}

}  // namespace gshare
