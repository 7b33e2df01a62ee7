// The GPU timeline drawn as one self-contained SVG image, for people who would rather look
// than read, and above all see why a job waited: a section per GPU, a row per job on it, each
// lease hold a rectangle (class "lease", a light colour per job), each wait for the lease a
// pale dashed one (class "wait"), each job's time pending in the queue a grey band (class
// "queued"), each drop, swap, checkpoint, suspension, handoff, job start and end a dark mark
// (class "mark <kind>"), a time axis of round local clock times (class "tick"), one legend,
// and a tooltip (<title>) on each. Jobs that never used a GPU in the window are counted, not
// drawn. Reads the local time zone (localtime_r); any thread.
#pragma once

#include <map>
#include <string>

#include "cli/timeline_model.h"

namespace gshare {

// The SVG document (UTF-8, with its XML declaration). Job names are made valid UTF-8 with
// their control characters escaped, and XML-escaped.
// `gpu_labels`: a GPU's UUID -> its heading ("GPU 0: NVIDIA H200"); a GPU not named there is
// headed by the start of its UUID.
std::string TimelineSvg(const Timeline& t,
                        const std::map<std::string, std::string>& gpu_labels = {});

}  // namespace gshare
