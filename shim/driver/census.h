// Census: how many calls of each hooked submission (gated) and synchronization export the
// shim saw, for comparison with an independent count (CUPTI) and to tell which revision of
// an export a program reaches. On only when GSHARE_CENSUS=<path> is set; then the counts are
// written to <path>.<pid> at exit as "<export> <count>" lines, plus "#captured <n>" (calls
// recorded into a stream capture, which bypass the gate), "#narrowed <n>" (kernel launches
// moved to the SM partition, lease/sm_partition.h), "#behind <n>" (backlogs this job fell
// into as a watched job, lease/backlog_watch.h), "#behind_ms <n>" (how long, in ms, its seat
// was marked behind in all), "#behind_capped <n>" (those backlogs that lasted the rule's
// cap, BacklogWatch::kMaxBehindNs, or longer: the mark cleared as the job's new pace, not at a
// real gap), "#beside_denied <n>" (times a batch MPS client found every beside turn held,
// lease/beside_turns.h: once per wait for a busy higher seat's gap, and once per launch in a
// gap that would have gone to the SM partition) and "#narrow_waits <n>" (moved launches that
// waited for the partition's depth bound, lease/sm_partition.h). Count: any thread, lock-free.
//
// As a watched job it also lists its first kBehindLogSize backlog marks and clears, one
// "#behind_event" line each (CensusBehindEvent): what the watch had learnt when it marked the
// job behind, and how the mark ended, so that a backlog that lasted the cap can be told from
// one that caught up.
#pragma once

#include <atomic>
#include <cstdint>

#include "driver/real_driver.h"

namespace gshare::shim {

extern bool g_census_on;  // set once before the first hook runs through LoadRealDriver
extern std::atomic<uint64_t> g_census[kNumHooks];
extern std::atomic<uint64_t> g_census_captured;
extern std::atomic<uint64_t> g_census_narrowed;
extern std::atomic<uint64_t> g_census_behind;
extern std::atomic<uint64_t> g_census_behind_ms;
extern std::atomic<uint64_t> g_census_behind_capped;
extern std::atomic<uint64_t> g_census_beside_denied;
extern std::atomic<uint64_t> g_census_narrow_waits;

// One "#behind_event" line: `kind` 'm' (marked behind), 'c' (cleared at a real gap or when the
// seat changed) or 'x' (cleared at the cap); times in µs, `at_us` since the census began.
struct BehindEventView {
  char kind = 0;
  int64_t at_us = 0;
  int64_t usual_gap_us = 0;      // BacklogWatch::UsualGapNs at the event
  int64_t usual_period_us = 0;   // BacklogWatch::UsualPeriodNs
  int64_t since_real_us = 0;     // 'm': since the last real gap ended; else how long it was marked
  int64_t forecast_us = 0;       // QuietForecast::PredictNs
  int64_t last_gaps_us[4] = {};  // the last four gaps the forecast saw, newest first
};
inline constexpr int kBehindLogSize = 64;
// Appends `e` while fewer than kBehindLogSize were kept; no-op with the census off. Any thread.
void CensusBehindEvent(const BehindEventView& e);

// Reads GSHARE_CENSUS. Called once while the driver is loaded.
void CensusInit();

inline void CensusCount(HookId id) {
  if (__builtin_expect(g_census_on, 0)) g_census[id].fetch_add(1, std::memory_order_relaxed);
}

}  // namespace gshare::shim
