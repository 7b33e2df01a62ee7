// Users' and groups' names and ids, for %u in output patterns, `gshare queue -u` and the
// config's names. Reads the password and group databases (getpwuid_r, getpwnam_r,
// getgrnam_r); any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gshare {

// The login name of `uid`, or its number as text when it has none.
std::string UserName(uint32_t uid);

// The uid of login name or number `user`, or nullopt when there is no such user.
std::optional<uint32_t> UserId(const std::string& user);
// The uid of login name `name` (a number is not read as one), or nullopt.
std::optional<uint32_t> UserIdOfName(const std::string& name);
// The gid of group name `name` (getgrnam_r), or nullopt when there is no such group.
std::optional<uint32_t> GroupIdOfName(const std::string& name);

}  // namespace gshare
