// A job's token: the secret its processes show the daemon to join the job (docs/design.md,
// "Who may join a job"). The runner hands it to the job in GSHARE_JOB_TOKEN; the shim sends
// its bytes in the hello (include/gshare/protocol.h HelloMsg::token). Other users cannot read
// a process's environment (/proc/PID/environ needs ptrace access), so a process that shows it
// was given it by the job. Any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace gshare {

inline constexpr size_t kJobTokenBytes = 16;

// kJobTokenBytes from getrandom(2), as 2 * kJobTokenBytes lowercase hex digits. Error when the
// kernel gives no randomness.
Result<std::string> NewJobToken();

// `bytes` (kJobTokenBytes of them) as lowercase hex.
std::string JobTokenHex(const uint8_t* bytes);

// Whether `a` equals `b`, in time that does not depend on where they differ; false when either
// is empty.
bool JobTokensEqual(std::string_view a, std::string_view b);

}  // namespace gshare
