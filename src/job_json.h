// JSON shapes shared by the daemon (which builds them) and the CLI (which prints them):
// a job record as `gshare status --json` shows it. Any thread.
#pragma once

#include <nlohmann/json.hpp>

#include "job_store.h"

namespace gshare {

// Schema version of every JSON document gshare prints.
inline constexpr int kJsonSchemaVersion = 1;

// Serializes JSON for the wire and for people. Command lines and paths are bytes, not
// always UTF-8: invalid sequences become U+FFFD instead of throwing.
inline std::string ToJsonText(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

// {"id","name","state","priority","argv","cwd","uid","gpu","quantum_ms","submit_time",
//  "start_time","end_time","exit_code","signal","pid","lease_seconds","wait_seconds",
//  "peak_bytes","kind","reason"}; absent values are null.
nlohmann::json JobToJson(const JobRecord& r);

}  // namespace gshare
