// The GPU timeline drawn as one self-contained SVG image, for people who would rather look
// than read: a section per GPU (and one for what happens on no GPU), a row per job in it,
// each lease hold a rectangle (class "lease", coloured by job), each drop, swap, checkpoint,
// suspension, job start and end a mark (class "mark <kind>"), a time axis in seconds from the
// first event, and a tooltip (<title>) on each. Pure: any thread.
#pragma once

#include <string>

#include "cli/timeline_model.h"

namespace gshare {

// The SVG document (UTF-8, with its XML declaration). Job names are made valid UTF-8 with
// their control characters escaped, and XML-escaped.
std::string TimelineSvg(const Timeline& t);

}  // namespace gshare
