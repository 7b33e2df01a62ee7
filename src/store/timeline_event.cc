#include "store/timeline_event.h"

#include <array>
#include <utility>

namespace gshare {
namespace {

constexpr std::array<std::pair<TimelineKind, const char*>, 15> kNames = {{
    {TimelineKind::kDaemonStart, "daemon_start"},
    {TimelineKind::kJobStart, "job_start"},
    {TimelineKind::kJobEnd, "job_end"},
    {TimelineKind::kGrant, "grant"},
    {TimelineKind::kDrop, "drop"},
    {TimelineKind::kRelease, "release"},
    {TimelineKind::kSwapOut, "swap_out"},
    {TimelineKind::kSwapIn, "swap_in"},
    {TimelineKind::kCheckpoint, "checkpoint"},
    {TimelineKind::kRestore, "restore"},
    {TimelineKind::kSuspend, "suspend"},
    {TimelineKind::kResume, "resume"},
    {TimelineKind::kWait, "wait"},
    {TimelineKind::kWaited, "waited"},
    {TimelineKind::kHandoff, "handoff"},
}};

}  // namespace

const char* TimelineKindName(TimelineKind kind) {
  for (const auto& [k, name] : kNames) {
    if (k == kind) return name;
  }
  return "?";
}

std::optional<TimelineKind> TimelineKindFromName(std::string_view name) {
  for (const auto& [k, text] : kNames) {
    if (name == text) return k;
  }
  return std::nullopt;
}

}  // namespace gshare
