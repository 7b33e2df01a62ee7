// A uid's login name, for %u in output patterns and `gshare queue -u`. Reads the password
// database (getpwuid_r/getpwnam_r); any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gshare {

// The login name of `uid`, or its number as text when it has none.
std::string UserName(uint32_t uid);

// The uid of login name or number `user`, or nullopt when there is no such user.
std::optional<uint32_t> UserId(const std::string& user);

}  // namespace gshare
