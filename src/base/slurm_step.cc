#include "base/slurm_step.h"

#include <charconv>
#include <sstream>

#include "base/process_identity.h"

namespace gshare {

namespace {

constexpr int kMaxDepth = 64;
constexpr std::string_view kTitle = "slurmstepd: [";

// /proc/PID/status "Uid:\treal\teffective\tsaved\tfs": true when real and effective are 0.
bool RootOwned(const std::string& dir, bool* known) {
  std::istringstream status(ReadProcFile(dir + "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Uid:", 0) != 0) continue;
    std::istringstream ids(line.substr(4));
    long real = -1, effective = -1;
    *known = static_cast<bool>(ids >> real >> effective);
    return *known && real == 0 && effective == 0;
  }
  *known = false;
  return false;
}

}  // namespace

std::optional<SlurmStep> ParseStepdTitle(std::string_view cmdline) {
  while (!cmdline.empty() && (cmdline.back() == '\0' || cmdline.back() == ' ')) {
    cmdline.remove_suffix(1);
  }
  if (cmdline.substr(0, kTitle.size()) != kTitle || cmdline.back() != ']') return std::nullopt;
  std::string_view id = cmdline.substr(kTitle.size(), cmdline.size() - kTitle.size() - 1);
  size_t dot = id.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == id.size()) return std::nullopt;
  SlurmStep s;
  auto [end, ec] = std::from_chars(id.data(), id.data() + dot, s.job_id);
  if (ec != std::errc{} || end != id.data() + dot || s.job_id <= 0) return std::nullopt;
  std::string_view step = id.substr(dot + 1);
  for (char c : step) {
    const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z');
    if (!ok) return std::nullopt;
  }
  if (step.size() > 32) return std::nullopt;
  s.step = std::string(step);
  return s;
}

std::optional<SlurmStep> SlurmStepOf(pid_t pid, const std::string& proc_root) {
  for (int depth = 0; depth < kMaxDepth && pid > 1; ++depth) {
    const std::string dir = proc_root + "/" + std::to_string(pid);
    std::optional<ProcessStat> stat = ReadProcessStat(pid, proc_root);
    if (!stat || stat->state == 'Z' || stat->state == 'X') return std::nullopt;
    bool known = false;
    if (RootOwned(dir, &known)) {
      if (depth == 0) return std::nullopt;  // the asker is root's: no task of a step
      std::optional<SlurmStep> step = ParseStepdTitle(ReadProcFile(dir + "/cmdline"));
      if (!step) return std::nullopt;
      step->stepd_pid = pid;
      step->stepd_start = stat->start_ticks;
      return step;
    }
    if (!known) return std::nullopt;
    pid = stat->ppid;
  }
  return std::nullopt;
}

std::string StepName(int64_t job_id, const std::string& step) {
  return std::to_string(job_id) + "." + step;
}

}  // namespace gshare
