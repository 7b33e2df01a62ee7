// The GPU timeline as a Chrome trace (the Trace Event Format that Perfetto's UI and
// chrome://tracing open): one process per GPU ("pid" numbers the GPUs in the order they
// appear, named by their UUID; 0 holds the events of no GPU), one thread per job ("tid" is the
// job id, named "job N (name)"), each lease hold a complete event ("X", ts and dur in
// microseconds), each drop, swap, checkpoint, suspension, job start and end an instant event
// ("i"). The job's process id, bytes and times are in "args". Pure: any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/timeline_model.h"

namespace gshare {

// {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}: metadata events first,
// then the holds and marks in time order. `user` gives an owner's name for the args.
nlohmann::json TimelineTrace(const Timeline& t,
                             const std::function<std::string(uint32_t uid)>& user);

}  // namespace gshare
