// `gshare top`'s frame as lines of text, built from one `gshare status --json` document and one
// NVML sample (base/gpu_metrics.h): pure, so the layout is unit-tested without a terminal and
// batch mode prints the same lines. cmd_top.cc draws them with ncurses and handles the keys.
// Main thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/gpu_metrics.h"

namespace gshare {

struct TopLine {
  // How a line is drawn: kTitle and kHeader in reverse video, kSelected highlighted, the job
  // states in their colours (running green, pending yellow, failed red, ended dim).
  enum class Style { kPlain, kTitle, kHeader, kSelected, kRunning, kPending, kFailed, kEnded };
  std::string text;
  Style style = Style::kPlain;
};

// The order of the job rows (`o` cycles through them).
enum class TopSort { kState, kPriority, kGpuTime, kMemory, kId };

struct TopInput {
  const nlohmann::json* status = nullptr;  // the status document; nullptr: no daemon answered
  std::vector<GpuSample> gpus;             // NVML's GPUs (empty without NVML)
  int64_t selected_job = 0;                // the highlighted job; 0 or absent: the first
  std::string message;                     // the outcome of the last key, or why no data
  std::string clock;                       // "12:03:04"
  int width = 120;                         // columns; every line is cut to width - 1
  TopSort sort = TopSort::kState;
  bool help = false;  // the help page in place of the job rows
  // A uid's login name (base/user_name.h UserName); injected for tests.
  std::function<std::string(uint32_t)> user_name;
};

struct TopFrame {
  std::vector<TopLine> lines;
  std::vector<int64_t> jobs;  // the job ids of the job rows, top to bottom
  int64_t selected_job = 0;   // the highlighted job after clamping (0: no jobs)
};

// Job rows come running and suspended first, then pending, then ended (the daemon lists the
// last 20), each group in the daemon's order, unless `sort` says otherwise. The job table keeps
// the columns that fit `width` (JOB, ST, NAME and REASON always; 80 columns keep PRI, ON-GPU,
// LEASE and GPU too). GPUs are those the daemon uses merged with those NVML lists (by UUID), so
// an idle GPU shows too.
TopFrame RenderTop(const TopInput& in);

// The keys, for the help line and the tests; within 79 columns.
inline constexpr const char* kTopKeys =
    "q quit  j/k select  c cancel  h hold  +/- priority  s suspend  o sort  ? help";

}  // namespace gshare
