// What `gshare timeline` draws: the recorded events (store/timeline_event.h) of a time window
// turned into lease spans per GPU and job (a grant paired with the release that ended it) and
// the marks between them (drops, swaps, checkpoints, suspensions, job starts and ends). The
// trace writer (timeline_trace.h) and the SVG writer (timeline_svg.h) both read it. Pure
// functions of their arguments: any thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "store/timeline_event.h"

namespace gshare {

// One job's hold of one GPU's lease, from its grant to its release, in unix microseconds.
struct TimelineSpan {
  std::string gpu;
  int64_t job = 0;
  int64_t start_us = 0;
  int64_t end_us = 0;
  std::string mode;      // the grant's: "exclusive", "shared", "off"; "" when it began earlier
  std::string released;  // why it ended ("dropped", "idle", "exit", ...); "" if held still
  int pid = 0;           // the process whose grant began it (0: not known)
};

struct Timeline {
  int64_t since_us = 0;  // the window
  int64_t until_us = 0;
  std::vector<std::string> gpus;         // in the order they first appear
  std::map<int64_t, std::string> names;  // job id -> its name, where known
  std::map<int64_t, uint32_t> owners;    // job id -> its owner's uid
  std::vector<TimelineSpan> spans;       // in the order they began
  // Waits for a GPU's lease, from a wait event to its waited event (`released`: "granted",
  // "gave up"; "" still waiting), in the order they began.
  std::vector<TimelineSpan> waits;
  // Waits in the queue: each job start's pending time (its event's ms) before it, on no GPU.
  std::vector<TimelineSpan> queued;
  // Every event but grants, releases, waits and waiteds, in order.
  std::vector<TimelineEvent> marks;
};

// Builds the timeline of `events` (in the order they were recorded) within [since_us,
// until_us]. A release whose grant came before the window began at since_us; a hold not
// released ends at until_us, or where the next daemon start shows its daemon gone; waits
// alike.
Timeline BuildTimeline(const std::vector<TimelineEvent>& events, int64_t since_us,
                       int64_t until_us);

// Narrows `t` to begin at `since_us` (later than its start): holds, waits and queue waits
// that ended before it are dropped, those under way then begin there; marks before it are
// dropped, and GPUs and names left as they are.
void ClipTimeline(Timeline* t, int64_t since_us);

// "job 12 (train.py)", or "job 12" when the name is not known.
std::string TimelineJobLabel(const Timeline& t, int64_t job);

}  // namespace gshare
